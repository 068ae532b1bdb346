"""Routing scorers (gateway/routing/plugin.py: Scorer), one per file: each gives a node a cost for
the request, lower better. They import routing's state and types, never a profile or a picker."""

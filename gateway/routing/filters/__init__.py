"""Routing filters (gateway/routing/plugin.py: Filter), one per file: each narrows the nodes a
request may go to and, when it leaves none, says why. They import routing's state and types,
never a profile, a picker or each other."""

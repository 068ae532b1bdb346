"""Routing pickers (gateway/routing/plugin.py: Picker), one per file: each chooses one node among
those the filters left, by the scorer's costs, and names the reason. They import routing's state
and types and gateway/routing/pickers/random_lowest.py (`lowest`), never a profile."""

"""Fixtures of the gateway tests: a tiny Q8_0 model and a real edge node process serving it."""

from tests.fixtures.edge_node import edge_node, model_path  # noqa: F401 - fixtures

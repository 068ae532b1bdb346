"""Fixtures of the gateway tests: a tiny Q8_0 model and a real edge node process serving it."""

import pytest

from formats.ggml_types import GGMLType
from tests.fixtures.edge_node import EdgeNode


@pytest.fixture(scope="module")
def model_path(tiny_model):
    return tiny_model(GGMLType.Q8_0)


@pytest.fixture(scope="module")
def edge_node(model_path):
    node = EdgeNode(model_path, slots=2)
    yield node
    node.stop()

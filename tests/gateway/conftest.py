"""Fixtures of the gateway tests: a tiny Q8_0 model, a real edge node process serving it, and the
gateway's EdgeBackend connected to that node (`backend`)."""

import pytest

from gateway.backends.edge import EdgeBackend
from tests.fixtures.edge_node import edge_node, model_path  # noqa: F401 - fixtures


@pytest.fixture
async def backend(edge_node):  # noqa: F811 - the fixture above
    backend = EdgeBackend("edge-a", f"127.0.0.1:{edge_node.port}", frozenset({"tiny"}))
    await backend.start()
    yield backend
    await backend.close()

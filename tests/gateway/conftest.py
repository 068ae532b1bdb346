"""Fixtures of the gateway tests: a tiny Q8_0 model, a real edge node process serving it, the
gateway's EdgeBackend connected to that node (`backend`), and a gateway in front of an edge node
with a long context window (`long_context_gateway`: tool listings fit)."""

import pytest

from gateway.backends.edge import EdgeBackend
from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from tests.fixtures.edge_node import edge_node, long_context_node, model_path  # noqa: F401 - fixtures
from tests.fixtures.gateway_app import Gateway
from tests.fixtures.small_disk import SmallDisk

# a function's parameters, as the tool tests declare it
WEATHER_PARAMETERS = {
    "type": "object",
    "properties": {"city": {"enum": ["Paris", "Oslo"]}},
    "required": ["city"],
    "additionalProperties": False,
}


@pytest.fixture
async def long_context_gateway(long_context_node):  # noqa: F811 - the fixture above
    path, node = long_context_node
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(path), context_length=2048)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])],
    )
    async with Gateway(config) as gw:
        yield gw


@pytest.fixture
async def backend(edge_node):  # noqa: F811 - the fixture above
    backend = EdgeBackend("edge-a", f"127.0.0.1:{edge_node.port}", frozenset({"tiny"}))
    await backend.start()
    yield backend
    await backend.close()


@pytest.fixture
def small_disk(tmp_path):
    """A folder whose disk fills on demand (tests/fixtures/small_disk.py), undone after the test."""
    disk = SmallDisk(tmp_path / "small")
    yield disk
    disk.close()

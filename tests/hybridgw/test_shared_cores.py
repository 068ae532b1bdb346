"""`hybridgw up` lends the cloud engine the edge's cores while the edge has no request."""

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from hybridgw.shared_cores import SharedCores


def test_the_cloud_gets_every_core_while_no_edge_has_a_request():
    edges = [NodeState(f"edge-{i}", NodeKind.EDGE, frozenset({"m"})) for i in range(2)]
    cores = SharedCores(num_cores=4, cloud_share=2)
    assert cores.cloud_threads() == 4  # no edge node known yet
    cores.edges = edges
    assert cores.cloud_threads() == 4
    dispatched = edges[1].load.dispatch(prompt_tokens=10)
    assert cores.cloud_threads() == 2
    dispatched.finished()
    assert cores.cloud_threads() == 4
    edges[0].load.report(num_requests=1, num_prompt_tokens=0)  # another gateway's request there
    assert cores.cloud_threads() == 2


async def test_up_lends_the_cores_of_the_edge_nodes_on_this_machine_only(tiny_model):
    """The edges' states are known once the gateway started (its edge backends are made then):
    read before, the list was empty and the cloud took every core while the edge computed."""
    import argparse
    import threading

    from aiohttp.test_utils import TestServer

    from formats.ggml_types import GGMLType
    from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
    from hybridgw.up_command import _gateway_app

    model = ModelEntry("tiny", str(tiny_model(GGMLType.Q8_0)), context_length=128)
    here, elsewhere = (EdgeNodeEntry(i, "127.0.0.1:9", ["tiny"]) for i in ("edge-local", "edge-far"))
    config = GatewayConfig(models=[model], edge_nodes=[here, elsewhere])
    args = argparse.Namespace(no_cloud=True, no_prefix_caching=False)
    cores = SharedCores(num_cores=2, cloud_share=1)
    app = _gateway_app(config, args, {}, (cores, {"edge-local"}), threading.Event())
    server = TestServer(app)
    await server.start_server()
    try:
        assert [edge.node_id for edge in cores.edges] == ["edge-local"]
        dispatched = cores.edges[0].load.dispatch(prompt_tokens=10)
        assert cores.cloud_threads() == 1
        dispatched.finished()
        assert cores.cloud_threads() == 2
    finally:
        await server.close()

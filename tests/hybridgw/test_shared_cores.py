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

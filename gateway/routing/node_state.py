"""A node as routing sees it: what it serves and can do, its reported rates, and its live load
(gateway/routing/node_load.py), kept current by its backend (gateway/backends/)."""

from dataclasses import dataclass, field

from gateway.core.capabilities import OWN_NODE
from gateway.routing.calibration import Calibration
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_load import NodeLoad


@dataclass(slots=True)
class NodeState:
    node_id: str
    kind: NodeKind
    models: frozenset[str]
    healthy: bool = True
    starting: bool = False  # not serving yet: loading (a first start compiling its kernels)
    # when a starting node is expected to serve (the router's clock); None: unknown, or serving
    ready_at: float | None = None
    cooldown_until: float = 0.0
    load: NodeLoad = field(default_factory=NodeLoad)
    max_running: int = 1
    queue_bound: int = 32  # waiting requests beyond which the node takes no more
    kv_usage: float = 0.0
    prefill_tokens_per_s: float = 0.0
    decode_tokens_per_s: float = 0.0  # per sequence, at the batch decoded last
    decode_steps: tuple[tuple[int, float], ...] = ()  # (batch size, seconds per decode step)
    context_length: int | None = None  # per request (an edge slot's window); None: unknown
    rtt_s: float = 0.001
    calibration: Calibration = field(default_factory=Calibration)
    cached_block_hashes: frozenset[int] = frozenset()  # the prompt blocks its prefix cache holds
    prefix_block_size: int = 0  # tokens per hashed block (0: the node reports no prefix cache)
    # one paged prefix cache for all its requests (a cloud engine's): a request admitted after
    # another reads the blocks that one computed while it still runs; an edge slot's cache serves
    # only the next request in that slot, and a pool of several workers may split the two
    shares_prefix_blocks: bool = False
    # a cloud-kind node on the gateway's own machine (`hybridgw up`'s in-process engine): it costs
    # no more than the edge, so the edge is not preferred over it (privacy still goes by kind)
    on_prem: bool = False
    capabilities: frozenset[str] = OWN_NODE  # what it can do (gateway/core/capabilities.py)

    @property
    def is_on_prem(self) -> bool:
        return self.kind == NodeKind.EDGE or self.on_prem

    def arrival_s(self, now: float) -> float | None:
        """How long until a starting node is expected to serve; None when it serves, or is not
        starting, or its arrival is unknown or overdue (not counted on then)."""
        if not self.starting or self.ready_at is None or self.ready_at <= now:
            return None
        return self.ready_at - now

    @property
    def num_running(self) -> int:
        return min(self.load.num_requests, self.max_running)

    @property
    def num_waiting(self) -> int:
        return self.load.num_requests - self.num_running

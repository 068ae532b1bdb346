"""Which tier takes a public request that has latency targets.

`hybridgw up` runs its cloud engine in process, on the edge's machine, and on the edge's cores:
a public request placed on that edge takes cores from the engine's batch, and a slot from the
private requests only the edge may serve. So with targets an on-prem cloud engine takes every
public request it has room for, even one it is predicted to queue: it schedules by the
request's own targets (the shortest prompts first, steps kept within the TPOT target, no more
requests admitted than that allows: cloud/waiting_order.py, cloud/step_budget.py), and the edge
adds no cores to wait on. The edge takes public requests only when no such engine is open.
Measured on one 2-core machine (docs/benchmarks.md):
- placed by predicted first token, the edge took a quarter of every burst (its slots start at
  once) and the two tiers served 335 tokens/s where the engine alone served 520;
- placed on an edge predicted to meet the targets where the engine was predicted to miss them
  (its TTFT factor learned on an overloaded workload), 8% of shared-prefix prompts made the
  engine's TTFT p99 15 s where it alone had 5 s;
- on the mixed workload (TTFT 10 s, TPOT 200 ms), with the engine scheduling by targets, all on
  the engine met 47 of 64 requests' targets; placed on the edge once the engine queued, 1-5
  documents per run went there and each prefill stalled the engine's steps for seconds: 12-35.
An edge that is busy already (its private requests, in a mixed workload) is the exception: its
cores are not lent to the engine while it serves (hybridgw/shared_cores.py), so it competes with
the engine: among the two that meet the targets, the one predicted sooner takes the request (and
the edge alone, when only it meets them); its slots batch the decode beside the requests already
there. Measured on mixed (2 cores, seeds 0-2): with the engine first whenever it met the targets,
33-37 of 40 chats ran on the engine, on one core, beside an edge serving a few private requests
on the other (186 tokens/s median, a document 10.4 s to its first token); competing, 26-36 (199
tokens/s, every target met).
Among the other nodes that meet the targets, the edges (on-prem, cheaper) come before a remote
cloud. For the same reason a late request with targets on such an engine, still working, does
not move to an edge (gateway/dispatch/dispatcher.py's first-token deadline): the run above moved 9 public
requests, 7 of them documents, to the edge after their deadline, and met 24 of 64 targets."""

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState


def is_on_prem_engine(node: "NodeState") -> bool:
    return node.kind != NodeKind.EDGE and node.on_prem


def on_prem_taking(nodes: list["NodeState"], meeting: list["NodeState"]) -> list["NodeState"]:
    """The on-prem nodes that compete for the request: the cloud engines predicted to meet its
    targets (in `meeting`) and the busy edges that meet them; else every open engine, unless a
    busy edge meets them (none then: the edges take it)."""
    meeting_engines = [n for n in meeting if is_on_prem_engine(n)]
    busy_edges = [n for n in meeting if is_busy_edge(n)]
    if meeting_engines:
        return meeting_engines + busy_edges
    if busy_edges:
        return []
    return [n for n in nodes if is_on_prem_engine(n)]


def is_busy_edge(node: "NodeState") -> bool:
    """An edge serving requests: its cores are its own already (hybridgw/shared_cores.py lends
    an idle edge's cores to the engine), so a request it takes costs the engine nothing more."""
    return node.kind == NodeKind.EDGE and node.load.num_requests > 0


def tiers_by_preference(meeting: list["NodeState"]) -> list[list["NodeState"]]:
    """The other nodes that meet the targets, by tier, the preferred first (empty ones left out):
    the edges, then the remote cloud."""
    tiers = (
        [n for n in meeting if n.kind == NodeKind.EDGE],
        [n for n in meeting if not n.is_on_prem],
    )
    return [tier for tier in tiers if tier]


def move_targets(here: "NodeState", others: list["NodeState"], has_targets: bool) -> list["NodeState"]:
    """The nodes a late request on `here`, a working node, may move to: not an edge from an
    on-prem cloud engine when the request has targets."""
    if has_targets and is_on_prem_engine(here):
        return [n for n in others if n.kind != NodeKind.EDGE]
    return others

"""Which tier takes a public request that has latency targets.

`hybridgw up` runs its cloud engine in process, on the edge's machine, and on the edge's cores:
a public request placed on that edge takes cores from the engine's batch, and a slot from the
private requests only the edge may serve. So with targets an on-prem cloud engine takes a public
request whenever it is predicted to meet them or nothing waits there; the edge takes one only
when that engine queues or is absent. Measured on one 2-core machine (docs/benchmarks.md):
- placed by predicted first token, the edge took a quarter of every burst (its slots start at
  once) and the two tiers served 335 tokens/s where the engine alone served 520;
- placed on an edge predicted to meet the targets where the engine was predicted to miss them
  (its TTFT factor learned on an overloaded workload), 8% of shared-prefix prompts made the
  engine's TTFT p99 15 s where it alone had 5 s.
Among the other nodes that meet the targets, the edges (on-prem, cheaper) come before a remote
cloud."""

from typing import TYPE_CHECKING

from gateway.node_kind import NodeKind

if TYPE_CHECKING:
    from gateway.router import NodeState


def is_on_prem_engine(node: "NodeState") -> bool:
    return node.kind != NodeKind.EDGE and node.on_prem


def engines_taking(nodes: list["NodeState"], meeting: list["NodeState"]) -> list["NodeState"]:
    """The on-prem cloud engines that take the request: predicted to meet its targets (in
    `meeting`), else with no request waiting there."""
    engines = [n for n in meeting if is_on_prem_engine(n)]
    return engines or [n for n in nodes if is_on_prem_engine(n) and n.num_waiting == 0]


def tiers_by_preference(meeting: list["NodeState"]) -> list[list["NodeState"]]:
    """The other nodes that meet the targets, by tier, the preferred first (empty ones left out):
    the edges, then the remote cloud."""
    tiers = (
        [n for n in meeting if n.kind == NodeKind.EDGE],
        [n for n in meeting if not n.is_on_prem],
    )
    return [tier for tier in tiers if tier]

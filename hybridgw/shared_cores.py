"""The cores `hybridgw up` shares between its two tiers on one machine.

Each tier has its own cores while both compute (hybridgw/up_command.py: _split_cores), but a
tier is often idle: a burst the router sends all to the cloud left the edge's core unused. The
cloud engine runs in this process and asks before each step how many threads it may use
(cloud/engine/llm_engine.py: threads_for_step): every core while the edge node has no request, its own
share otherwise. Measured on 2 cores, 32 concurrent chats all on the cloud engine: 214-224
tokens/s on its one core, 331-397 on both.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports the gateway only when it runs one
    from gateway.routing.node_state import NodeState


class SharedCores:
    def __init__(self, num_cores: int, cloud_share: int):
        self.num_cores = num_cores
        self.cloud_share = cloud_share
        self.edges: list[NodeState] = []  # the edge nodes on this machine, once the gateway has them

    def cloud_threads(self) -> int:
        """Every core while no edge node here has a request; the cloud's own share otherwise."""
        if any(edge.load.num_requests for edge in self.edges):
            return self.cloud_share
        return self.num_cores

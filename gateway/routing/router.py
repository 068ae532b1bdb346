"""The one entry point to routing for the gateway: `pick(request, exclude)`, used by dispatch,
the first-token deadline's moves and resumes alike. It holds what a pick needs besides the
request (the profile the configuration names, the nodes' live states, the clock, the random
source for ties) so that no caller passes them, and nothing else: the decision is the pure
profile's (gateway/routing/profile.py)."""

import random
import time
from collections.abc import Callable, Collection, Iterable

from gateway.routing.node_state import NodeState
from gateway.routing.prediction import predict
from gateway.routing.profile import Profile
from gateway.routing.route_types import Decision, Prediction, RouteRequest


class Router:
    def __init__(
        self,
        profile: Profile,
        nodes: Callable[[], Iterable[NodeState]],
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`nodes`: the nodes' live states now (backends join as the gateway starts)."""
        self.profile, self.nodes, self.clock = profile, nodes, clock
        self.rng = rng if rng is not None else random.Random()

    def pick(self, request: RouteRequest, exclude: Collection[str] = ()) -> Decision:
        """Where the request goes now among the nodes not in `exclude` (ids), or why nowhere."""
        nodes = [n for n in self.nodes() if n.node_id not in exclude]
        return self.profile.decide(request, nodes, self.clock(), self.rng)

    def predict(self, node: NodeState, request: RouteRequest) -> Prediction:
        """The node's prediction for the request now (the same the profiles read)."""
        return predict(node, request, self.clock())

"""Routing as a pure function: a request and the nodes' live state in, a Decision out. No I/O.
How nodes are predicted is gateway/routing/prediction.py; which rules decide, and in what order,
is the profile's (gateway/routing/profiles.py: filters, a scorer and a picker, one per file under
gateway/routing/filters/, scorers/ and pickers/). The gateway calls it through
gateway/routing/router.py (`Router.pick(request, exclude)`)."""

import random

from gateway.routing.node_state import NodeState
from gateway.routing.profile import Profile
from gateway.routing.profiles import DEFAULT_PROFILE, resolve_profile
from gateway.routing.route_types import Decision, RouteRequest

PREDICTED = resolve_profile(DEFAULT_PROFILE)


def route(
    request: RouteRequest,
    nodes: list[NodeState],
    now: float,
    rng: random.Random,
    profile: Profile = PREDICTED,
) -> Decision:
    """Where the request goes among `nodes` at `now` under `profile` (the router's by default)."""
    return profile.decide(request, nodes, now, rng)

"""The refusal of a request no node may serve (none serves its model, none may hold private
data, none is up): 503, named for whether it was private."""

from gateway.routing.route_types import Decision, Outcome, RouteRequest


def no_node(request: RouteRequest) -> Decision:
    return Decision(Outcome.UNAVAILABLE, None, "no_private_node" if request.is_private else "no_node")

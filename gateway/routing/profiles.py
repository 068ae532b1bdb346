"""The built-in routing profiles, by the name `[routing] profile` gives ("predicted" unless
set), and the lookup of a configured one.

"predicted" is the router: the nodes that serve the model, may hold the request's data (private
only on an edge), can do what it needs, are up (or arriving soon) and not cooling down, fit it in
their context window and take it now (edges keep slots for private requests); a starting node
only where it is predicted sooner than every serving one; no full edge whose slot wait is a
guess while another node has room; then the latency-targets picker by predicted latency.

The static profiles are what the router is compared with (benchmarks/routing.py): "all-edge",
"all-cloud" (private requests still only on the edge), "round-robin" (the open node this gateway
sent the fewest requests, in order), "least-busy" (the fewest requests per slot, ties at
random). They keep the queue bounds but guard no edge slots and count no arriving node."""

from collections.abc import Mapping

from gateway.routing.profile import Profile, ProfileSpec
from gateway.routing.registry import RoutingProfileError

DEFAULT_PROFILE = "predicted"

_ELIGIBLE = ("serves-model", "private-on-edge", "capable", "healthy-or-arriving", "fits-context")
_STATIC = ("serves-model", "private-on-edge", "capable", "healthy", "fits-context", "queue-bounds")

BUILT_IN: dict[str, ProfileSpec] = {
    "predicted": ProfileSpec(
        (*_ELIGIBLE, "taking", "arriving", "free-slot"),
        "predicted-latency",
        "latency-targets",
    ),
    "all-edge": ProfileSpec(
        ("serves-model", "private-on-edge", "edge-only", *_STATIC[2:], "free-slot"),
        "predicted-latency",
        "latency-targets",
    ),
    "all-cloud": ProfileSpec(
        ("serves-model", "private-on-edge", "cloud-for-public", *_STATIC[2:], "free-slot"),
        "predicted-latency",
        "latency-targets",
    ),
    "round-robin": ProfileSpec(_STATIC, "num-dispatched", "first-lowest"),
    "least-busy": ProfileSpec(_STATIC, "load-ratio", "random-lowest"),
}


def resolve_profile(name: str, configured: Mapping[str, ProfileSpec] | None = None) -> Profile:
    """The profile named: a configured one ([routing.profiles.NAME]) or a built-in one.
    RoutingProfileError when neither has the name or one of its plugins is unknown."""
    specs = {**BUILT_IN, **(configured or {})}
    if name not in specs:
        raise RoutingProfileError(f"routing.profile: unknown profile {name!r} (one of {', '.join(specs)})")
    return Profile.build(name, specs[name])

"""Every routing plugin by the name a profile gives it in configuration ([routing.profiles.NAME]
filters, scorer, picker): all registered here, in one place, as llm-d registers its plugins. A
new rule is a file under filters/, scorers/ or pickers/ and a line here."""

from collections.abc import Callable
from typing import TypeVar

from gateway.routing.filters.arriving import Arriving
from gateway.routing.filters.capable import Capable
from gateway.routing.filters.cloud_for_public import CloudForPublic
from gateway.routing.filters.edge_only import EdgeOnly
from gateway.routing.filters.fits_context import FitsContext
from gateway.routing.filters.free_slot import FreeSlot
from gateway.routing.filters.healthy import Healthy
from gateway.routing.filters.private_on_edge import PrivateOnEdge
from gateway.routing.filters.serves_model import ServesModel
from gateway.routing.filters.taking import Taking
from gateway.routing.pickers.first_lowest import FirstLowest
from gateway.routing.pickers.latency_targets import LatencyTargets
from gateway.routing.pickers.random_lowest import RandomLowest
from gateway.routing.plugin import Filter, Picker, Scorer
from gateway.routing.scorers.load_ratio import LoadRatio
from gateway.routing.scorers.num_dispatched import NumDispatched
from gateway.routing.scorers.predicted_latency import PredictedLatency

T = TypeVar("T")

FILTERS: dict[str, Callable[[], Filter]] = {
    ServesModel.name: ServesModel,
    PrivateOnEdge.name: PrivateOnEdge,
    EdgeOnly.name: EdgeOnly,
    CloudForPublic.name: CloudForPublic,
    Capable.name: Capable,
    "healthy": lambda: Healthy(with_arriving=False),
    "healthy-or-arriving": lambda: Healthy(with_arriving=True),
    FitsContext.name: FitsContext,
    "taking": lambda: Taking(guard=True),
    "queue-bounds": lambda: Taking(guard=False),
    Arriving.name: Arriving,
    FreeSlot.name: FreeSlot,
}
SCORERS: dict[str, Callable[[], Scorer]] = {
    PredictedLatency.name: PredictedLatency,
    NumDispatched.name: NumDispatched,
    LoadRatio.name: LoadRatio,
}
PICKERS: dict[str, Callable[[], Picker]] = {
    LatencyTargets.name: LatencyTargets,
    FirstLowest.name: FirstLowest,
    "random-lowest": lambda: RandomLowest(0.0, "random-lowest"),
}


class RoutingProfileError(ValueError):
    """A routing profile or plugin the configuration names is unknown or unsafe; the message
    names it and what there is."""


def plugin(kind: str, registry: dict[str, Callable[[], T]], name: str, profile: str) -> T:
    if name not in registry:
        known = ", ".join(registry)
        raise RoutingProfileError(f"routing profile {profile!r}: unknown {kind} {name!r} (one of {known})")
    return registry[name]()

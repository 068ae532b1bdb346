"""A routing profile: filters run in order, then a picker chooses among the nodes left by a
scorer's costs (gateway/routing/plugin.py). Composed in configuration by plugin names
(ProfileSpec, [routing.profiles.NAME]); the built-in ones are in gateway/routing/profiles.py."""

import random
from dataclasses import dataclass

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, Picker, RouteCycle, Scorer
from gateway.routing.registry import FILTERS, PICKERS, SCORERS, RoutingProfileError, plugin
from gateway.routing.route_types import Decision, Outcome, RouteRequest

PRIVACY_FILTER = "private-on-edge"  # every profile has it: private requests stay on-prem


@dataclass(frozen=True, slots=True)
class ProfileSpec:
    """A profile as configuration names it: its plugins' names."""

    filters: tuple[str, ...]
    scorer: str
    picker: str


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    filters: tuple[Filter, ...]
    scorer: Scorer
    picker: Picker

    @classmethod
    def build(cls, name: str, spec: ProfileSpec) -> "Profile":
        """RoutingProfileError for an unknown plugin name or a profile without the privacy filter."""
        if PRIVACY_FILTER not in spec.filters:
            raise RoutingProfileError(
                f"routing profile {name!r}: its filters must include {PRIVACY_FILTER!r}"
            )
        filters = tuple(plugin("filter", FILTERS, f, name) for f in spec.filters)
        return cls(
            name,
            filters,
            plugin("scorer", SCORERS, spec.scorer, name),
            plugin("picker", PICKERS, spec.picker, name),
        )

    def decide(
        self, request: RouteRequest, nodes: list[NodeState], now: float, rng: random.Random
    ) -> Decision:
        """Where the request goes among `nodes` now, or why nowhere. Pure: no I/O; `rng` breaks ties."""
        cycle = RouteCycle(request, now, rng)
        for node_filter in self.filters:
            if node_filter.needs_predictions:
                cycle.predict_all(nodes)
            passed = node_filter.filter(cycle, nodes)
            if not passed:
                return node_filter.refuse(cycle, nodes)
            nodes = passed
        if self.scorer.needs_predictions or self.picker.needs_predictions:
            cycle.predict_all(nodes)
        costs = {n.node_id: self.scorer.cost(cycle, n) for n in nodes}
        node, reason = self.picker.pick(cycle, nodes, costs, self.scorer.reason)
        return Decision(Outcome.ROUTED, node.node_id, reason, tuple(cycle.predictions.values()))

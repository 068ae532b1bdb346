"""The three kinds of routing plugin, as llm-d's inference scheduler has them, and what one pick
knows (RouteCycle). A profile (gateway/routing/profile.py) runs its filters in order over the
nodes, then its picker chooses among those left by its scorer's costs.

- A Filter narrows the nodes. When it leaves none, its `refuse` says why, as the Decision the
  request gets (no node serves the model, none can do what it needs, all cooling down, ...).
- A Scorer gives each node left a cost, lower better (seconds, for the predicted latency).
- A Picker chooses one node and names the reason (a metrics label).

Predictions are made once per pick, for the nodes that reach the first plugin that reads them
(`needs_predictions`), and every one of them goes with the Decision."""

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from gateway.routing.node_state import NodeState
from gateway.routing.prediction import predict
from gateway.routing.route_types import Decision, Prediction, RouteRequest


@dataclass(slots=True)
class RouteCycle:
    """One pick: the request, the router's clock and random source, and the predictions made."""

    request: RouteRequest
    now: float
    rng: random.Random
    predictions: dict[str, Prediction] = field(default_factory=dict)
    is_predicted: bool = False

    def predict_all(self, nodes: list[NodeState]) -> None:
        if not self.is_predicted:
            self.predictions = {n.node_id: predict(n, self.request, self.now) for n in nodes}
            self.is_predicted = True


class Filter(ABC):
    name: ClassVar[str]
    needs_predictions: ClassVar[bool] = False

    @abstractmethod
    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        """The nodes that pass, in their order."""

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        """The decision when none of `nodes` passes (a filter that always leaves one never refuses)."""
        raise AssertionError(f"the {self.name} filter left no node")


class Scorer(ABC):
    name: ClassVar[str]
    needs_predictions: ClassVar[bool] = False
    reason: ClassVar[str]  # the reason of a node picked by this cost alone

    @abstractmethod
    def cost(self, cycle: RouteCycle, node: NodeState) -> float:
        """Lower is better."""


class Picker(ABC):
    name: ClassVar[str]
    needs_predictions: ClassVar[bool] = False

    @abstractmethod
    def pick(
        self, cycle: RouteCycle, nodes: list[NodeState], costs: dict[str, float], reason: str
    ) -> tuple[NodeState, str]:
        """One of `nodes` (never empty) and the reason; `reason`: the scorer's."""

"""Where a request goes: its RouteRequest (prompt length, expected output, privacy, latency
targets, the prompt tokens each node is predicted to hold cached) and the router's pick among
the nodes not excluded (gateway/routing/router.py `Router.pick`: the profile [routing] names, a
pure function of the request and the nodes' state). Used for the first dispatch, each retry,
each first-token deadline move and each resume."""

import random
from dataclasses import dataclass, field

from gateway.backends.base import Backend
from gateway.config.gateway_config import RoutingPolicy
from gateway.dispatch.cache_affinity import CacheAffinity
from gateway.dispatch.prefix_cache import PromptBlocks, predicted_cached_tokens
from gateway.privacy import PrivacyDecision
from gateway.request.prepared_request import PreparedRequest
from gateway.routing.profiles import resolve_profile
from gateway.routing.route_types import Decision, Outcome, RouteRequest
from gateway.routing.router import Router


@dataclass(slots=True)
class Placement:
    backends: list[Backend]
    policy: RoutingPolicy
    rng: random.Random
    affinity: CacheAffinity = field(default_factory=CacheAffinity)  # prompt_cache_key's nodes
    router: Router = field(init=False)  # the one entry point to routing: pick(request, exclude)

    def __post_init__(self) -> None:
        profile = resolve_profile(self.policy.profile, self.policy.profiles)
        self.router = Router(profile, lambda: [b.state for b in self.backends], self.rng)

    def pick(self, request: RouteRequest, excluded: set[str]) -> tuple[Decision, Backend | None]:
        """The router's decision among the nodes not excluded, and the chosen node's backend
        (None unless the request was routed)."""
        decision = self.router.pick(request, excluded)
        if decision.outcome is not Outcome.ROUTED:
            return decision, None
        return decision, next(b for b in self.backends if b.state.node_id == decision.node_id)

    def expected_tokens(self, prepared: PreparedRequest) -> int:
        """What a choice is expected to generate: its max_tokens, capped for the prediction."""
        return min(prepared.max_tokens, self.policy.expected_output_tokens)

    def route_request(
        self, prepared: PreparedRequest, privacy: PrivacyDecision, prompt: PromptBlocks
    ) -> RouteRequest:
        body, ids = prepared.body, prepared.prompt_ids
        return RouteRequest(
            prepared.model.name,
            len(ids),
            self.expected_tokens(prepared),
            privacy.is_private,
            prepared.context.targets,
            self.affinity.cached_tokens(
                prompt.salt,
                body.prompt_cache_key,
                len(ids),
                predicted_cached_tokens([b.state for b in self.backends], prompt),
            ),
            "ttft" if body.stream else "e2e",
            tuple(prepared.needs),
        )

"""The answer to a request the router did not place: 400 (it fits no node's context window, or
no node that may serve it has what it needs), 429 (every node is at capacity) or 503 (no node
can serve it now), each recorded for the status page."""

import time

from gateway.activity import RecentDecision
from gateway.capabilities import DESCRIPTIONS
from gateway.errors import APIError, invalid
from gateway.metrics import GatewayMetrics
from gateway.privacy import PrivacyDecision
from gateway.routing.route_types import Decision, Outcome


def raise_for_outcome(
    decision: Decision,
    privacy: PrivacyDecision,
    model: str,
    metrics: GatewayMetrics,
    needs: dict[str, str],
    cause: APIError | None = None,
) -> None:
    """`needs`: each need of the request and the parameter that brings it; `cause`: a node's named
    failure of this request (Redis out of memory...), answered instead of "no node" once no other
    node is left to try."""
    if decision.outcome is Outcome.UNSUPPORTED:
        where = "on-prem node" if privacy.is_private else "node"
        param = needs.get(decision.reason, decision.reason)
        raise invalid(
            f"No {where} serving '{model}' takes {DESCRIPTIONS.get(decision.reason, decision.reason)} "
            f"('{param}').",
            param,
            "unsupported_content" if decision.reason == "vision" else "unsupported_parameter",
        )
    if decision.outcome is Outcome.TOO_LONG:
        raise invalid(
            "The prompt plus the expected output does not fit the context window of any node "
            "that may serve this request.",
            "messages",
            "context_length_exceeded",
        )
    if decision.outcome in (Outcome.SHED, Outcome.UNAVAILABLE):
        metrics.recent.record(
            RecentDecision(
                time.time(),
                "",
                model,
                decision.outcome.value,
                "",
                "",
                decision.reason,
                privacy.is_private,
                privacy.reason,
            )
        )
    retry = {"Retry-After": str(max(1, round(decision.retry_after_s)))}
    if decision.outcome == Outcome.SHED:
        raise APIError(
            429,
            "All nodes are at capacity; retry later.",
            "rate_limit_error",
            code="overloaded",
            headers=retry,
        )
    if decision.outcome == Outcome.UNAVAILABLE and cause is not None:
        cause.headers.update(retry)
        raise cause
    if decision.outcome == Outcome.UNAVAILABLE:
        message = (
            "No on-prem node can take this private request now."
            if privacy.is_private
            else "No node can serve this model now."
        )
        raise APIError(503, message, "server_error", code=decision.reason, headers=retry)

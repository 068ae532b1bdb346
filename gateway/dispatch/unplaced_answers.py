"""The answer to a request the router did not place: 400 (it fits no node's context window, or
no node that may serve it has what it needs), 429 (every node is at capacity) or 503 (no node
can serve it now). A refusal says why in its code (`all_queues_full`, `private_no_capacity`,
`node_cooling_down` with the seconds left in its message and Retry-After, `no_node`,
`no_private_node`), is counted by that reason (hybridgw_refused_requests_total) and recorded for
the status page."""

import math
import time

from gateway.core.capabilities import DESCRIPTIONS
from gateway.core.errors import APIError, invalid
from gateway.observability.activity import RecentDecision
from gateway.observability.metrics import GatewayMetrics
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
    assert decision.outcome in (Outcome.SHED, Outcome.UNAVAILABLE)
    metrics.refused.labels(decision.reason).inc()
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
    retry_after_s = max(1, math.ceil(decision.retry_after_s))
    retry = {"Retry-After": str(retry_after_s)}
    if decision.outcome == Outcome.SHED:
        message = "All nodes are at capacity; retry later."
        raise APIError(429, message, "rate_limit_error", code=decision.reason, headers=retry)
    if cause is not None:  # the last node tried failed in a way that names itself
        cause.headers.update(retry)
        raise cause
    if decision.reason == "node_cooling_down":
        message = (
            "Every node that can serve this request is cooling down after failures; "
            f"retry in {retry_after_s} s."
        )
    elif privacy.is_private:
        message = "No on-prem node can take this private request now."
    else:
        message = "No node can serve this model now."
    raise APIError(503, message, "server_error", code=decision.reason, headers=retry)

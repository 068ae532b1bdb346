"""The "slo" scheduling policy's order of waiting requests: by priority (lower first, as the
"priority" policy), then the shortest prompt still to compute first, with aging.

Under a time-to-first-token target, first come first served lets one long prompt make every
short one behind it late: on the mixed workload (chats of ~80 prompt tokens, documents of ~850,
TTFT target 10 s) the chats queued behind documents on the cloud engine and missed the target.
Shortest-remaining-prompt first keeps the short requests' wait short; a request that has waited
PATIENCE_FACTOR times its own TTFT target (DEFAULT_PATIENCE_S without one) goes ahead of every
other of its priority, in arrival order, so a long prompt waits a bounded time. A preempted
request keeps its place at the front (it was running).
"""

from cloud.engine.request import Request, RequestStatus

PATIENCE_FACTOR = 3.0  # of a request's TTFT target: waited this long, it goes first
DEFAULT_PATIENCE_S = 30.0  # the same, for a request without a TTFT target


def waited_too_long(request: Request, now: float) -> bool:
    patience = PATIENCE_FACTOR * request.ttft_target_s if request.ttft_target_s > 0 else DEFAULT_PATIENCE_S
    return now - request.arrival_time >= patience


def slo_order_key(request: Request, now: float) -> tuple:
    """Sort key of a waiting request (smaller first)."""
    if request.status == RequestStatus.PREEMPTED or waited_too_long(request, now):
        return (request.priority, 0, 0, request.arrival_time)
    remaining = request.num_tokens - request.num_computed_tokens
    return (request.priority, 1, remaining, request.arrival_time)

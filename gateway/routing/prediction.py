"""What a node is predicted to give a request: its first token (TTFT), its pace (TPOT) and its end.

Prediction for a node (seconds), with n = the node's requests (gateway/routing/node_load.py: its last
report corrected live by this gateway's dispatches) plus this one, and M its max running:
    batch    = min(n, M)                      the decode batch once this request runs
    step(b)  = measured decode step time at batch b (interpolated; nodes report a table)
    queued   = max(0, n - M)                  requests ahead of a free slot
    wait     = when the (n - M)-th earliest of this gateway's requests there is predicted to end,
               less now (gateway/routing/node_load.py; their tokens at step(M) * tpot_factor, or at the
               pace the running ones get where that is shorter: a TPOT factor learned off a
               burst's first requests, predicted at batch 1, had put an edge that answered in
               20 s at 350 s); with other gateways' requests there, whose ends
               are unknown: queued * service / M, service = uncached / prefill_rate + expected
               output * step(M) / (1 - share)
    ahead    = prompt tokens still to compute on the node, when no slot wait (else in `wait`)
    uncached = prompt - the tokens the node's prefix cache holds (gateway/dispatch/prefix_cache.py)
    ttft     = wait + (rtt + (ahead + uncached) / prefill_rate) * ttft_factor + lag (a wait read
               off the running requests' ends is calibrated already: scaled twice, an edge 10x
               late was predicted 1,700 s away where it answered in 30)
    share    = the node's time its prompts take, from the prompt tokens sent to it lately, less
               those of requests still waiting for a slot (gateway/routing/node_load.py: prompt_share):
               decodes get the rest
    tpot     = step(batch) / (1 - share) * tpot_factor
    e2e      = ttft + expected_output * tpot
The factors are the node's observed/predicted ratios, learned online (gateway/routing/calibration.py);
`lag` is how far past its predicted first token the latest of its requests still without one
is (gateway/routing/node_load.py: overdue_lag_s): the node is that far behind, known before calibration
learns it at the first tokens.
A starting node (its engine loading) expected to serve at `ready_at` has its first token that
much later: `arrival` = ready_at - now, real time, not calibrated (gateway/routing/filters/arriving.py).
"""

from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Prediction, RouteRequest
from shared.step_rates import step_seconds_at

DEFAULT_PREFILL_TPS = 100.0  # until a node has reported measured rates
DEFAULT_DECODE_TPS = 10.0


def decode_step_seconds(node: NodeState, batch_size: int) -> float:
    """The node's decode step time at `batch_size`, interpolated in its measured table
    (shared/step_rates.py: step_seconds_at); from its per-sequence rate without one."""
    seconds = step_seconds_at(node.decode_steps, max(1, batch_size))
    return seconds if seconds is not None else 1.0 / (node.decode_tokens_per_s or DEFAULT_DECODE_TPS)


def predict(node: NodeState, request: RouteRequest, now: float = 0.0) -> Prediction:
    prefill = node.prefill_tokens_per_s or DEFAULT_PREFILL_TPS
    slots = max(1, node.max_running)
    num_requests = node.load.num_requests + 1
    slowdown = 1.0 / (1.0 - node.load.prompt_share(now, prefill, slots))  # prompts between steps
    step = decode_step_seconds(node, min(num_requests, slots)) * slowdown
    uncached = request.prompt_tokens - request.cached_tokens.get(node.node_id, 0)
    prompt_s = uncached / prefill
    queued = max(0, num_requests - slots)
    calibration = node.calibration
    slot_wait_s = 0.0  # from the running requests' calibrated ends: real time, not scaled again
    ahead_s = node.load.prompt_tokens_ahead / prefill  # the prompts before it, computed first
    if queued:  # `step` is then the full batch's
        backlog_s = ahead_s * calibration.ttft_factor
        token_s = step * calibration.tpot_factor
        pace = node.load.running_pace_s()
        if pace is not None:
            token_s = min(token_s, pace)  # each estimate errs long: the pace over prompt steps
        slot_free_at = node.load.slot_free_at(slots, now, token_s, backlog_s)
        if slot_free_at is None:  # the requests ahead served in turn, at the pace when measured
            service = prompt_s + request.expected_output_tokens * (step if pace is None else min(step, pace))
            ahead_s = max(ahead_s, queued * service / slots)
        elif slot_free_at - now > backlog_s:  # else the prompts ahead take longer than the slot
            slot_wait_s, ahead_s = slot_free_at - now, 0.0
    wait_s = slot_wait_s + (node.arrival_s(now) or 0.0)  # real time, not scaled by the calibration
    raw_ttft = node.rtt_s + wait_s + ahead_s + prompt_s
    ttft = wait_s + (raw_ttft - wait_s) * calibration.ttft_factor + node.load.overdue_lag_s(now)
    tpot = step * calibration.tpot_factor
    e2e = ttft + request.expected_output_tokens * tpot
    return Prediction(node.node_id, ttft, e2e, tpot, raw_ttft, step)


def fits(node: NodeState, request: RouteRequest) -> bool:
    needed = request.prompt_tokens + request.expected_output_tokens
    return node.context_length is None or needed <= node.context_length

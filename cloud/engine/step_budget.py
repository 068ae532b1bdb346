"""What one step may take under its requests' latency targets (Sarathi-Serve's stall-free
batching, with the budget set by the SLO instead of a fixed chunk).

A step that decodes 30 chats and computes 1,000 tokens of a document's prompt takes as long as
the prompt does: on the mixed workload (short chats, long documents, TPOT target 200 ms) every
chat on the cloud engine got 300-580 ms per token, and none met its target. With targets:

- the step's prompt tokens are what the tightest target of the requests it decodes leaves after
  their decodes, at the step costs measured under the current load (cloud/engine/step_cost_model.py),
  each prompt token costing its attention over the longest context a running prompt has reached;
  at least MIN_PREFILL_TOKENS, so waiting prompts always progress;
- no request is admitted once the decode step of one more would pass the tightest target of the
  running and waiting requests: past that batch every decoding request misses its target (the
  same run, with the prompt cap alone, admitted 40 chats whose 375 ms steps all missed it);
  AT_RISK_SHARE of it, not TARGET_SHARE, bounds admission while a waiting request would miss
  its TTFT target by waiting for the first running request to finish (a burst of 32 chats on
  this 2-core machine: 23 admitted, and the other 9 waited a whole generation, TTFT 25 s); not
  the whole target: on the mixed workload, always at risk, the batch grew until its steps took
  the whole 200 ms, and every chat on the engine missed it by a few percent (TPOT p50 209 ms;
  AT_RISK_SHARE for both this and the slack below: 182 ms, SLO met 20% -> 66%);

- more when the waiting prompts' TTFT targets need it: the steepest rate among the earliest
  deadlines (each at TTFT_SHARE of its target), times the step's own time (as many as a step
  can take when no rate would do), but only as far as the decoding requests' mean TPOT has
  room for (`decode_slack_s`). Bounded by TPOT alone, a burst of 32 chats (TTFT target 10 s)
  got 32 prompt tokens a step beside the first ones' decodes: TTFT p99 16-23 s where computing
  the prompts first takes 7. Unbounded by TPOT, the mixed workload's documents took 1.7 s steps
  and its chats got 770 ms per token;

Requests without targets leave the budget as it is (vLLM's max_num_batched_tokens and
max_num_seqs alone).
"""

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass

from cloud.engine.step_cost_model import StepCostModel
from shared.request_state import RequestState

MIN_PREFILL_TOKENS = 32  # prompt tokens a step computes however tight the targets
TTFT_SHARE = 0.5  # of a TTFT target, where its prompt's deadline is set: room for later arrivals
MIN_HORIZON_S = 0.05  # a deadline already passed counts as this close
TARGET_SHARE = 0.8  # of the tightest target: room for the model's error and for stalls
AT_RISK_SHARE = 0.9  # the same while waiting would miss a TTFT target (admission, slack)


@dataclass(frozen=True, slots=True)
class StepLimits:
    prefill_tokens: int | None = None  # prompt tokens the step may compute; None: no cap
    max_running: int | None = None  # requests running after admission; None: max_num_seqs alone


NO_LIMITS = StepLimits()


def is_decoding(request: RequestState) -> bool:
    """Caught up with its tokens: the next step computes one token for it and samples."""
    return request.num_tokens - request.num_computed_tokens <= 1


def step_limits(
    running: list[RequestState],
    waiting: Iterable[RequestState],
    costs: StepCostModel,
    max_num_seqs: int,
    now: float | None = None,
) -> StepLimits:
    """The next step's limits from the requests' TPOT and TTFT targets and the engine's step
    costs (no limit before it has measured them); `max_num_seqs`: the engine's own cap; `now`:
    time.monotonic(), the requests' arrival clock."""
    if not costs.has_reference:
        return NO_LIMITS
    waiting = list(waiting)
    now = time.monotonic() if now is None else now  # one clock reading for the whole step
    decoding = [r for r in running if is_decoding(r)]
    decoding_targets = _targets(decoding)
    all_targets = [*_targets(running), *_targets(waiting)]
    prefill_tokens = max_running = None
    decode_keys = sum(r.num_computed_tokens + 1 for r in decoding)
    if decoding_targets:
        decode_s = costs.seconds(len(decoding), 0, decode_keys)
        context = max((r.num_computed_tokens for r in running if not is_decoding(r)), default=0)
        seconds = TARGET_SHARE * min(decoding_targets)
        within = costs.prompt_tokens_within(seconds, len(decoding), decode_keys, context)
        due = prompt_tokens_due([*running, *waiting], costs, decode_s, now)
        if due != 0:  # only as far as the decoding requests' mean TPOT has room for
            step_s = decode_s + max(0.0, decode_slack_s(decoding, decode_s, now))
            spendable = costs.prompt_tokens_within(step_s, len(decoding), decode_keys, context)
            due = spendable if due is None else min(due, spendable)
        prefill_tokens = max(MIN_PREFILL_TOKENS, within, due)
    if all_targets:
        keys_each = decode_keys // len(decoding) if decoding else 0
        share = AT_RISK_SHARE if _ttft_at_risk(running, waiting, costs, decode_keys, now) else TARGET_SHARE
        seconds = share * min(all_targets)
        fitting = costs.decodes_within(seconds, MIN_PREFILL_TOKENS, max_num_seqs, keys_each)
        max_running = max(len(running), fitting)
    return StepLimits(prefill_tokens, max_running)


def _targets(requests: Iterable[RequestState]) -> list[float]:
    return [r.tpot_target_s for r in requests if r.tpot_target_s > 0]


def _ttft_at_risk(
    running: list[RequestState],
    waiting: list[RequestState],
    costs: StepCostModel,
    decode_keys: int,
    now: float,
) -> bool:
    """Whether a waiting request's TTFT deadline comes before the first running request is
    predicted to finish (its tokens left at the current decode step's time)."""
    if not running:
        return False
    tokens_left = min(r.sampling_params.max_tokens - len(r.output_token_ids) for r in running)
    first_finish = now + tokens_left * costs.seconds(len(running), 0, decode_keys)
    return any(r.arrival_time + r.ttft_target_s < first_finish for r in waiting if r.ttft_target_s > 0)


def decode_slack_s(decoding: list[RequestState], decode_s: float, now: float) -> float:
    """How much longer than a decode step the next step may take with every decoding request's
    mean time per token still within AT_RISK_SHARE of its TPOT target (with TARGET_SHARE of it,
    a burst's last prompts waited 11.7 s, not 6.7; with the whole target, the mixed workload's
    chats ended a few percent past it), were its remaining tokens
    (to max_tokens) decoded at `decode_s` a step: what a request decoded fast so far has
    saved. A burst's first chats have saved most of their budget while the rest's prompts are
    computed; a chat among long documents soon has none left."""
    slack = math.inf
    for request in decoding:
        if request.tpot_target_s <= 0:
            continue
        max_tokens = request.sampling_params.max_tokens
        budget = AT_RISK_SHARE * request.tpot_target_s * (max_tokens - 1)
        spent = now - (request.first_token_time or now)
        slack = min(slack, budget - spent - (max_tokens - len(request.output_token_ids)) * decode_s)
    return slack


def prompt_tokens_due(
    requests: Iterable[RequestState],
    costs: StepCostModel,
    decode_s: float,
    now: float,
) -> int | None:
    """The prompt tokens a step beside decodes taking `decode_s` must compute for every prompt
    with a TTFT target to be computed by its deadline (arrival + TTFT_SHARE * target), at the
    current step costs: 0 for none, None when no step rate can give it."""
    deadlines = sorted(
        (r.arrival_time + TTFT_SHARE * r.ttft_target_s, r.num_prompt_tokens - r.num_computed_tokens)
        for r in requests
        if r.ttft_target_s > 0 and r.first_token_time is None
    )
    rate = tokens = 0.0  # prompt tokens per second the steepest deadline needs
    for deadline, remaining in deadlines:
        tokens += remaining
        rate = max(rate, tokens / max(deadline - now, MIN_HORIZON_S))
    if not rate:
        return 0
    per_token_s = costs.seconds(0, 1, 0)  # attention left out: these prompts are mostly short
    if rate * per_token_s >= 1:
        return None
    return math.ceil(rate * decode_s / (1 - rate * per_token_s))

"""What one step may take under its requests' latency targets (Sarathi-Serve's stall-free
batching, with the budget set by the SLO instead of a fixed chunk).

A step that decodes 30 chats and computes 1,000 tokens of a document's prompt takes as long as
the prompt does: on the mixed workload (short chats, long documents, TPOT target 200 ms) every
chat on the cloud engine got 300-580 ms per token, and none met its target. With targets:

- the step's prompt tokens are what the tightest target of the requests it decodes leaves after
  their decodes, at the step costs measured under the current load (cloud/step_cost_model.py),
  each prompt token costing its attention over the longest context a running prompt has reached;
  at least MIN_PREFILL_TOKENS, so waiting prompts always progress;
- no request is admitted once the decode step of one more would pass the tightest target of the
  running and waiting requests: past that batch every decoding request misses its target (the
  same run, with the prompt cap alone, admitted 40 chats whose 375 ms steps all missed it).

Requests without targets leave the budget as it is (vLLM's max_num_batched_tokens and
max_num_seqs alone).
"""

from collections.abc import Iterable
from dataclasses import dataclass

from cloud.step_cost_model import StepCostModel
from shared.request_state import RequestState

MIN_PREFILL_TOKENS = 32  # prompt tokens a step computes however tight the targets
TARGET_SHARE = 0.8  # of the tightest target: room for the model's error and for stalls


@dataclass(frozen=True, slots=True)
class StepLimits:
    prefill_tokens: int | None = None  # prompt tokens the step may compute; None: no cap
    max_running: int | None = None  # requests running after admission; None: max_num_seqs alone


NO_LIMITS = StepLimits()


def is_decoding(request: RequestState) -> bool:
    """Caught up with its tokens: the next step computes one token for it and samples."""
    return request.num_tokens - request.num_computed_tokens <= 1


def step_limits(
    running: list[RequestState], waiting: Iterable[RequestState], costs: StepCostModel, max_num_seqs: int
) -> StepLimits:
    """The next step's limits from the requests' TPOT targets and the engine's step costs (no
    limit before it has measured them); `max_num_seqs`: the engine's own cap."""
    if not costs.has_reference:
        return NO_LIMITS
    decoding = [r for r in running if is_decoding(r)]
    decoding_targets = _targets(decoding)
    all_targets = [*_targets(running), *_targets(waiting)]
    prefill_tokens = max_running = None
    decode_keys = sum(r.num_computed_tokens + 1 for r in decoding)
    if decoding_targets:
        context = max((r.num_computed_tokens for r in running if not is_decoding(r)), default=0)
        seconds = TARGET_SHARE * min(decoding_targets)
        within = costs.prompt_tokens_within(seconds, len(decoding), decode_keys, context)
        prefill_tokens = max(MIN_PREFILL_TOKENS, within)
    if all_targets:
        keys_each = decode_keys // len(decoding) if decoding else 0
        seconds = TARGET_SHARE * min(all_targets)
        fitting = costs.decodes_within(seconds, MIN_PREFILL_TOKENS, max_num_seqs, keys_each)
        max_running = max(len(running), fitting)
    return StepLimits(prefill_tokens, max_running)


def _targets(requests: Iterable[RequestState]) -> list[float]:
    return [r.tpot_target_s for r in requests if r.tpot_target_s > 0]

"""One request inside the edge engine: its tokens, its slot, how far the cache has computed it."""

from dataclasses import dataclass, field

from shared.sampling import Sampler, SamplingParams
from shared.step_output import FinishReason


@dataclass(slots=True)
class Sequence:
    """Prompt plus generated tokens. There is no separate prefill phase: `num_computed` says how
    many of `token_ids` are in the slot's KV cache; while it is below the prompt length the
    sequence advances by prompt chunks, afterwards by one sampled token per step."""

    request_id: str
    prompt_ids: list[int]
    params: SamplingParams
    sampler: Sampler
    slot_id: int | None = None
    num_computed: int = 0
    output_ids: list[int] = field(default_factory=list)
    finish_reason: FinishReason | None = None
    arrival_time: float = 0.0
    first_token_time: float | None = None
    priority: int = 0  # lower is admitted first
    cache_salt: str = ""  # only a slot cached under the same salt is reused
    num_cached_tokens: int = 0  # prompt tokens found in the slot's cache at admission

    @property
    def token_ids(self) -> list[int]:
        return self.prompt_ids + self.output_ids

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_ids) + len(self.output_ids)

    @property
    def is_prefilling(self) -> bool:
        return self.num_computed < len(self.prompt_ids)


def new_sequence(
    request_id: str, prompt_ids: list[int], params: SamplingParams, now: float, priority: int = 0
) -> Sequence:
    sampler = Sampler(params, prompt_ids)
    return Sequence(request_id, list(prompt_ids), params, sampler, arrival_time=now, priority=priority)

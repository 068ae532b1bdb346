"""What an engine (edge or cloud) reports per generated token; the servers stream these."""

from dataclasses import dataclass
from enum import StrEnum

from shared.sampling import SampledToken


class FinishReason(StrEnum):
    STOP = "stop"
    LENGTH = "length"
    ABORT = "abort"


class InvalidRequestError(ValueError):
    """A request an engine refuses: duplicate id, empty prompt, ids outside the vocabulary, a
    prompt longer than the context window. Servers answer it with INVALID_ARGUMENT."""


@dataclass(slots=True)
class StepOutput:
    """A token generated for a request in one step; `finish_reason` is set on its last token."""

    request_id: str
    token: SampledToken
    index: int  # position of the token in the completion
    finish_reason: FinishReason | None = None
    num_prompt_tokens: int = 0
    num_cached_tokens: int = 0

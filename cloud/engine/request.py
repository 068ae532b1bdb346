"""A request inside the cloud engine: the shared request state (shared/request_state.py) plus its
status and its preemptions.

There is no prefill phase and no decode phase: a request has `num_computed_tokens` (how many of
its tokens have K/V in the cache) and `num_tokens` (prompt + generated). Each step advances it by
some number of new tokens; once it has caught up, the step samples its next token.
"""

from dataclasses import dataclass, field
from enum import Enum, auto

from shared.engine import FinishReason
from shared.request_state import RequestState


class RequestStatus(Enum):
    WAITING = auto()
    RUNNING = auto()
    PREEMPTED = auto()
    FINISHED_STOPPED = auto()
    FINISHED_LENGTH = auto()
    FINISHED_ABORTED = auto()

    @property
    def is_finished(self) -> bool:
        return self in FINISH_REASONS

    @staticmethod
    def finished(reason: FinishReason) -> "RequestStatus":
        return {reason: status for status, reason in FINISH_REASONS.items()}[reason]


FINISH_REASONS = {
    RequestStatus.FINISHED_STOPPED: FinishReason.STOP,
    RequestStatus.FINISHED_LENGTH: FinishReason.LENGTH,
    RequestStatus.FINISHED_ABORTED: FinishReason.ABORT,
}


@dataclass(slots=True, eq=False)
class Request(RequestState):
    status: RequestStatus = RequestStatus.WAITING
    output_logprobs: list = field(default_factory=list)  # the SampledToken of each output token
    num_preemptions: int = 0

    @property
    def is_finished(self) -> bool:
        return self.status.is_finished

    @property
    def finish_reason(self) -> FinishReason | None:
        return FINISH_REASONS.get(self.status)

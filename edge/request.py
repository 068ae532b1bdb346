"""A request inside the edge engine: the shared request state (shared/request_state.py) plus the
slot whose KV cache holds it."""

from dataclasses import dataclass

from shared.engine import FinishReason
from shared.request_state import RequestState


@dataclass(slots=True, eq=False)
class Request(RequestState):
    slot_id: int | None = None
    finish_reason: FinishReason | None = None

"""The gateway's live view of a node's load: what the node last reported, corrected at once by
every request this gateway dispatches to it and every one that finishes.

A node reports its counts every poll (edge: gRPC Stats, cloud: worker heartbeats); a burst of
requests arrives within one poll interval, and routing from the last report alone sent all 32
requests of a burst to the node that looked idle. So each gateway counts its own requests from
the routing decision to their end, and a report only tells it how many requests *other*
gateways have there: `others = max(0, reported - own)` at the moment the report arrives. The
view is `others + own`, right after every dispatch and finish, and it stays right with several
gateway replicas, each of which learns the others' share from the node's own counts.

Requests in transit make a report lag this gateway's count (dispatched but not yet arrived, or
finished on the node but not yet here); the difference only ever lowers `others`, never below
zero, and the next report corrects it."""

import bisect
from dataclasses import dataclass, field


@dataclass(slots=True)
class NodeLoad:
    """Counts, all requests unless named: `own_*` this gateway's (live), `other_*` the rest of
    the node's load as of the last report. Nothing here goes negative."""

    own_requests: int = 0
    own_pending_prompt_tokens: int = 0  # prompts of own requests that have no first token yet
    other_requests: int = 0
    other_prompt_tokens: int = 0
    num_dispatched: int = 0  # ever, by this gateway (the round-robin policy's turn)
    own_end_times: list[float] = field(default_factory=list)  # predicted, sorted (router's clock)

    @property
    def num_requests(self) -> int:
        return self.own_requests + self.other_requests

    @property
    def prompt_tokens_ahead(self) -> int:
        """Prompt tokens the node must still compute before a new request's own."""
        return self.own_pending_prompt_tokens + self.other_prompt_tokens

    def report(self, num_requests: int, num_prompt_tokens: int) -> None:
        """The node's own counts (all gateways), as of now."""
        self.other_requests = max(0, num_requests - self.own_requests)
        self.other_prompt_tokens = max(0, num_prompt_tokens - self.own_pending_prompt_tokens)

    def dispatch(self, prompt_tokens: int, predicted_end: float = 0.0) -> "Dispatched":
        self.own_requests += 1
        self.own_pending_prompt_tokens += prompt_tokens
        self.num_dispatched += 1
        bisect.insort(self.own_end_times, predicted_end)
        return Dispatched(self, prompt_tokens, predicted_end)

    def slot_free_at(self, num_slots: int) -> float | None:
        """When a new request would get a slot, from the predicted ends of this gateway's own
        requests (the (n - slots + 1)-th earliest end frees its slot); None when other gateways'
        requests are there too (their ends are unknown) or a slot is free now."""
        ahead = self.own_requests - num_slots
        if self.other_requests or ahead < 0:
            return None
        return self.own_end_times[ahead]


class Dispatched:
    """One request this gateway sent, counted in its node's load from the routing decision until
    `finished()`; its prompt counts as work ahead until `first_token()`. Both are idempotent."""

    __slots__ = ("is_finished", "load", "pending_prompt_tokens", "predicted_end")

    def __init__(self, load: NodeLoad, prompt_tokens: int, predicted_end: float):
        self.load = load
        self.pending_prompt_tokens = prompt_tokens
        self.predicted_end = predicted_end
        self.is_finished = False

    def first_token(self) -> None:
        if self.pending_prompt_tokens:
            load = self.load
            remaining = load.own_pending_prompt_tokens - self.pending_prompt_tokens
            load.own_pending_prompt_tokens = max(0, remaining)
            self.pending_prompt_tokens = 0

    def finished(self) -> None:
        if not self.is_finished:
            self.first_token()
            self.is_finished = True
            self.load.own_requests = max(0, self.load.own_requests - 1)
            self.load.own_end_times.remove(self.predicted_end)

"""One request a gateway dispatched to a node, as its node's load counts it: from the routing
decision to its end, with its prompt counted as work ahead until its first token, and its pace
read off its tokens as they arrive (gateway/routing/node_load.py)."""

import time
from collections import Counter, deque
from collections.abc import Sequence
from typing import Protocol


class OwnLoad(Protocol):
    """The counters of a node's load that its dispatched requests keep (gateway/routing/node_load.py:
    NodeLoad, which imports this module: a protocol, not an import cycle)."""

    own_requests: int
    own_pending_prompt_tokens: int
    own_pending_cached_tokens: int
    last_token_at: float
    own: list["Dispatched"]
    block_hashes_in_flight: Counter[int]


RECENT_CHUNKS = 8  # a running request's expected end follows its pace over this many chunks
PACE_SPAN_S = 0.5  # ... or as many more as span this long (chunks read in a bunch look instant)
MAX_CHUNKS_KEPT = 64


class Dispatched:
    """One request this gateway sent, counted in its node's load from the routing decision until
    `finished()`; its prompt counts as work ahead until `first_token()`. Both are idempotent.
    `advance(n)` for each chunk of tokens that arrives (its pace)."""

    __slots__ = (
        "block_hashes",
        "dispatched_at",
        "expected_tokens",
        "first_at",
        "is_finished",
        "last_at",
        "load",
        "num_tokens",
        "pending_cached_tokens",
        "pending_prompt_tokens",
        "predicted_end",
        "predicted_ttft_s",
        "recent",
    )

    def __init__(
        self,
        load: OwnLoad,
        prompt_tokens: int,
        predicted_end: float,
        expected_tokens: int = 0,
        num_cached: int = 0,
        block_hashes: Sequence[int] = (),
        predicted_ttft_s: float = 0.0,
    ):
        self.load = load
        self.block_hashes = block_hashes
        self.pending_prompt_tokens = prompt_tokens
        self.pending_cached_tokens = num_cached
        self.predicted_end = predicted_end
        self.predicted_ttft_s = predicted_ttft_s  # as the router predicted it (0: none)
        self.dispatched_at = time.monotonic()
        self.expected_tokens = expected_tokens
        self.num_tokens = 0
        self.first_at: float | None = None
        self.last_at = 0.0
        self.is_finished = False
        self.recent: deque[tuple[float, int]] = deque(maxlen=MAX_CHUNKS_KEPT)  # (time, tokens so far)

    def advance(self, num_tokens: int) -> None:
        """A chunk of `num_tokens` tokens arrived (the first one counts as the first token)."""
        now = time.monotonic()
        if self.first_at is None:
            self.first_token()
            self.first_at = now
        self.num_tokens += num_tokens
        self.last_at = self.load.last_token_at = now
        self.recent.append((now, self.num_tokens))

    @property
    def recent_pace_s(self) -> float | None:
        """Its time per token over its last RECENT_CHUNKS chunks, or as many more as span
        PACE_SPAN_S (None before two, some time apart): what its next tokens take, once the
        prompt steps that slowed its first are over. Chunks that arrive in a bunch (a gateway
        busy for a moment reads them together) span no time: 8 of them had made a chat decoding
        at 90 ms a token look to take 35 ms."""
        if len(self.recent) < 2:
            return None
        last_at, last_count = self.recent[-1]
        first_at, first_count = self.recent[0]
        for back, (at, count) in enumerate(reversed(self.recent)):
            if back >= RECENT_CHUNKS - 1 and last_at - at >= PACE_SPAN_S:
                first_at, first_count = at, count
                break
        if last_at <= first_at or last_count <= first_count:
            return None
        return (last_at - first_at) / (last_count - first_count)

    def expected_end(
        self, now: float, step_s: float, backlog_s: float = 0.0, prompt_s: float = 0.0, paced: bool = False
    ) -> float:
        """From its recent pace once it has one (two chunks, some time apart), else the prediction
        made at dispatch while that lies ahead, else the node's step time per token left, after
        `prompt_s` when it has no token yet (the prompt work ahead of it and its own: a full
        cloud's queued chats, overdue on their optimistic predictions, were expected to end at
        once, and a request was predicted a free slot there 5.5 s away that waited 78 s). Once
        it decodes, with prompt work queued there (`backlog_s` to compute it), no later than that
        work and then its tokens left at the step time: a pace slowed by prompt steps lasts only as long as
        they do (a full cloud's chats, paced at 2.6 s a token through a prefill backlog, were
        expected to end in 80 s and decoded their last 30 tokens in 5). With the node `paced` (its
        running requests have a measured pace), one without a token ends no later than after its
        prompt and its tokens at `step_s`: a queued chat's prediction at dispatch carries the TPOT
        of a passing prompt burst (0.9-2 s a token on an edge running 0.1 s), and a full edge
        whose queued chats were expected to end a minute out was predicted 42 s for a slot."""
        remaining = max(0, self.expected_tokens - self.num_tokens)
        if (per_token := self.recent_pace_s) is not None:
            end = max(now, self.last_at + remaining * per_token)
        elif self.predicted_end > now:
            end = self.predicted_end
            if paced and self.first_at is None:
                end = min(end, now + prompt_s + remaining * step_s)
        else:
            return now + (prompt_s if self.first_at is None else 0.0) + remaining * step_s
        if backlog_s > 0 and self.first_at is not None:  # decoding (a queued one waits for a slot)
            end = min(end, now + backlog_s + remaining * step_s)
        return end

    def first_token(self) -> None:
        load = self.load
        if self.pending_prompt_tokens:
            remaining = load.own_pending_prompt_tokens - self.pending_prompt_tokens
            load.own_pending_prompt_tokens = max(0, remaining)
            self.pending_prompt_tokens = 0
        if self.pending_cached_tokens:
            remaining = load.own_pending_cached_tokens - self.pending_cached_tokens
            load.own_pending_cached_tokens = max(0, remaining)
            self.pending_cached_tokens = 0

    def finished(self) -> None:
        if not self.is_finished:
            self.first_token()
            self.is_finished = True
            self.load.own_requests = max(0, self.load.own_requests - 1)
            self.load.own.remove(self)
            in_flight = self.load.block_hashes_in_flight
            for block_hash in self.block_hashes:
                in_flight[block_hash] -= 1
                if in_flight[block_hash] <= 0:
                    del in_flight[block_hash]

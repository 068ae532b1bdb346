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
zero, and the next report corrects it.

A node's decode-step table is measured on pure decode steps, but an engine computes the prompts
of the requests it admits between them: a request decoding there gets its tokens only in the
time the prompts leave. The share of the node's time prompts take is read off what this gateway
sent it lately (`prompt_share`: prompt tokens to compute per second over the last
PROMPT_WINDOW_S, over the node's prefill rate); under shared-prefix chats the cloud's chats got a
token every 150-300 ms against a 68 ms step. (The mean pace of the running requests, used before,
followed single prompt steps: 30 requests that had just got their first token and then waited out
one 3 s step were each paced at 3 s a token, and the cloud was predicted 3.3 s a token.)

When a new request would wait for a slot, it waits for the earliest ends of the requests there:
each one's end is re-estimated from its own pace as its tokens arrive (a node that decodes three
times slower than predicted shows it within a few tokens), from the prediction made when it was
dispatched until it has a pace, and from the node's step time once that prediction has passed."""

import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from gateway.routing.dispatched_request import Dispatched

PROMPT_WINDOW_S = 10.0  # the prompt work sent to a node lately: over this many seconds
MAX_PROMPT_SHARE = 0.9  # a node past it is saturated: its decodes predicted 10x the step, no slower
OVERDUE_MARGIN_S = 1.0  # a request this much past its predicted first token proves the prediction short


@dataclass(slots=True)
class NodeLoad:
    """Counts, all requests unless named: `own_*` this gateway's (live), `other_*` the rest of
    the node's load as of the last report. Nothing here goes negative."""

    own_requests: int = 0
    own_pending_prompt_tokens: int = 0  # prompts of own requests that have no first token yet
    own_pending_cached_tokens: int = 0  # the parts of those the node's prefix cache holds
    other_requests: int = 0
    other_prompt_tokens: int = 0
    num_dispatched: int = 0  # ever, by this gateway (the round-robin policy's turn)
    last_token_at: float = 0.0  # when a token of this gateway's requests there last arrived
    last_private_at: float = float("-inf")  # when this gateway last sent it a private request
    own: list[Dispatched] = field(default_factory=list)  # this gateway's requests there, live
    # the chained hashes of own requests' full prompt blocks, each counted once per request there
    # (computed, or about to be: a request admitted later reads them from a shared prefix cache)
    block_hashes_in_flight: Counter[int] = field(default_factory=Counter)
    # (time.monotonic(), prompt tokens to compute) of this gateway's dispatches, PROMPT_WINDOW_S back
    recent_prompts: deque[tuple[float, int]] = field(default_factory=deque)
    recent_prompt_tokens: int = 0  # their sum (prompt_share reads it on every routing decision)

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
        # a node counts a request it has not admitted yet with its whole prompt, cached or not
        own = self.own_pending_prompt_tokens + self.own_pending_cached_tokens
        self.other_prompt_tokens = max(0, num_prompt_tokens - own)

    def dispatch(
        self,
        prompt_tokens: int,
        predicted_end: float = 0.0,
        expected_tokens: int = 0,
        num_cached: int = 0,
        block_hashes: Sequence[int] = (),
        predicted_ttft_s: float = 0.0,
    ) -> Dispatched:
        """`prompt_tokens`: those the node will compute; `num_cached`: those its prefix cache is
        predicted to hold. `predicted_end` on the router's clock (time.monotonic());
        `expected_tokens`: what it is expected to generate (the router's cap on max_tokens);
        `block_hashes`: its prompt's, counted in flight until it finishes; `predicted_ttft_s`:
        the router's TTFT prediction for it (0: none)."""
        self.own_requests += 1
        self.own_pending_prompt_tokens += prompt_tokens
        self.own_pending_cached_tokens += num_cached
        self.num_dispatched += 1
        self.block_hashes_in_flight.update(block_hashes)
        now = time.monotonic()
        while self.recent_prompts and self.recent_prompts[0][0] <= now - PROMPT_WINDOW_S:
            self.recent_prompt_tokens -= self.recent_prompts.popleft()[1]
        dispatched = Dispatched(
            self, prompt_tokens, predicted_end, expected_tokens, num_cached, block_hashes, predicted_ttft_s
        )
        if prompt_tokens:
            self.recent_prompts.append((dispatched.dispatched_at, prompt_tokens))
            self.recent_prompt_tokens += prompt_tokens
        self.own.append(dispatched)
        return dispatched

    def end_times(
        self, now: float, step_s: float, backlog_s: float = 0.0, num_slots: int | None = None
    ) -> list[float]:
        """The expected ends of this gateway's requests there, earliest first. One still waiting
        for its first token has the prompt work sent before it and its own to wait for: its
        share of `backlog_s` (the node's prompt work, in seconds) by the prompt tokens pending
        of this gateway's requests up to it, in dispatch order. One decoding is slowed only by
        the prompts of requests that hold one of the node's `num_slots` slots: those waiting for
        one are computed as slots free (counted, a burst's chats decoding on a full edge were
        expected to end in 4 s at the step time once the queue's prompts were done, and ended
        in 12 s)."""
        pending = sum(d.pending_prompt_tokens for d in self.own)
        queued_pending = sum(d.pending_prompt_tokens for d in self.queued_requests(num_slots))
        decode_backlog_s = backlog_s * (pending - queued_pending) / pending if pending else 0.0
        ends, pending_so_far, paced = [], 0, self.running_pace_s() is not None
        for dispatched in self.own:
            pending_so_far += dispatched.pending_prompt_tokens
            prompt_s = backlog_s * pending_so_far / pending if pending else 0.0
            ends.append(dispatched.expected_end(now, step_s, decode_backlog_s, prompt_s, paced))
        return sorted(ends)

    def prompt_share(self, now: float, prefill_tokens_per_s: float, num_slots: int | None = None) -> float:
        """The share of the node's time its prompts take, as sent lately: the prompt tokens this
        gateway sent it to compute over the last PROMPT_WINDOW_S (up to `now`), per second, over
        its prefill rate; at most MAX_PROMPT_SHARE. A request decoding there gets a token per
        step(batch) / (1 - share). With the node's `num_slots`, the prompts of requests still
        waiting for one are left out: they are computed as slots free, at the pace requests end,
        not beside the running ones now (counted, an edge whose 8 slots decoded a token per
        0.1 s was predicted 1.5 s a token while a queue of chats waited there)."""
        since = now - PROMPT_WINDOW_S
        tokens = self._recent_prompt_tokens(since, now)
        queued = self.queued_requests(num_slots)
        tokens -= sum(d.pending_prompt_tokens for d in queued if since < d.dispatched_at <= now)
        if not tokens or prefill_tokens_per_s <= 0:
            return 0.0
        return min(MAX_PROMPT_SHARE, tokens / PROMPT_WINDOW_S / prefill_tokens_per_s)

    def _recent_prompt_tokens(self, since: float, now: float) -> int:
        """The prompt tokens dispatched in (since, now]: the running sum less the few entries
        that aged out since the last dispatch, without a walk over the whole window (at 1,000
        requests/s it holds 10,000 entries, and this runs for every request)."""
        recent = self.recent_prompts
        if recent and recent[-1][0] > now:  # `now` in the past: count the window itself
            return sum(count for at, count in recent if since < at <= now)
        tokens = self.recent_prompt_tokens
        for at, count in recent:
            if at > since:
                break
            tokens -= count
        return tokens

    def queued_requests(self, num_slots: int | None) -> list[Dispatched]:
        """This gateway's requests there that wait for one of the node's `num_slots` slots: the
        latest dispatched without a token, as many as the node holds beyond its slots."""
        num_queued = self.num_requests - num_slots if num_slots is not None else 0
        if num_queued <= 0:
            return []
        return [d for d in self.own if d.first_at is None][-num_queued:]

    def overdue_lag_s(self, now: float) -> float:
        """How far past its predicted first token the latest of this gateway's requests there
        still without one is (0.0 when none is OVERDUE_MARGIN_S late): the node runs at least
        that far behind the predictions made for it, and a new request there, behind it, is
        predicted that much later. Calibration learns only at first tokens, which under a burst
        come after the burst has been placed (predicted at 25 s, shared-prefix chats waited 60-80 s
        on a saturated cloud while it took the rest). Added, not a ratio: one request predicted
        at 0.4 s and late by 4 s had made every prediction there 10x (a 6 s prompt predicted at
        60 s answered in 10 s)."""
        lag = 0.0
        for dispatched in self.own:
            predicted = dispatched.predicted_ttft_s
            if dispatched.first_at is None and predicted > 0:
                late = now - dispatched.dispatched_at - predicted
                if late > OVERDUE_MARGIN_S:
                    lag = max(lag, late)
        return lag

    def has_progressed_since(self, moment: float) -> bool:
        """Whether a token of any request there arrived after `moment` (time.monotonic()): the
        node is working, however slowly, not hung."""
        return self.last_token_at > moment

    def running_pace_s(self) -> float | None:
        """The median recent time per token of this gateway's requests there that have one (None:
        none has): what a request that gets a slot there next can expect."""
        paces = sorted(p for d in self.own if (p := d.recent_pace_s) is not None)
        return paces[len(paces) // 2] if paces else None

    def slots_decoding(self, num_slots: int) -> bool:
        """Whether a wait for one of the node's `num_slots` slots is read off real tokens: every
        request of this gateway's holding one has its first token and one has a measured pace
        (and no other gateway's requests are there, whose ends are unknown). While a slot's
        prompt is still computed, the running requests' paces and ends are those of the prompt
        phase: a burst's queued chats, predicted a slot in 4 s on an edge still computing its
        first prompts, waited 15 s."""
        if self.other_requests or not any(d.recent_pace_s is not None for d in self.own):
            return False
        queued = set(self.queued_requests(num_slots))
        return all(d.first_at is not None for d in self.own if d not in queued)

    def slot_free_at(
        self, num_slots: int, now: float = 0.0, step_s: float = 0.0, backlog_s: float = 0.0
    ) -> float | None:
        """When a new request would get a slot: the (n - slots + 1)-th earliest expected end of
        this gateway's own requests; None when other gateways' requests are there too (their
        ends are unknown) or a slot is free now. `step_s`: the node's time per decode step;
        `backlog_s`: its time to compute the prompt tokens queued there."""
        ahead = self.own_requests - num_slots
        if self.other_requests or ahead < 0:
            return None
        return self.end_times(now, step_s, backlog_s, num_slots)[ahead]

"""Continuous batching with one token budget per step (vLLM v1 style).

Each step, running requests are served first, in order: a decoding request takes one token, a
request still computing its prompt takes a chunk (at most `long_prefill_token_threshold`). Then
waiting requests are admitted while budget, the running cap and free blocks allow; their prompt
starts after whatever prefix is already cached, and one whose next block a running request is
computing waits for it rather than compute it again. When blocks run out for a running request, the
most recently admitted (or lowest-priority) request is preempted: its blocks are freed and it goes
back to the front of the queue, to be recomputed later from its tokens so far. Under
time-per-output-token targets the engine also caps a step's prompt tokens (cloud/engine/step_budget.py):
a prompt chunk past the cap waits for the next step, and so does admission.
"""

import time
from collections import deque
from dataclasses import dataclass, field

from cloud.engine.block_manager import BlockManager
from cloud.engine.config import SchedulerConfig
from cloud.engine.request import Request, RequestStatus
from cloud.engine.step_budget import NO_LIMITS, StepLimits, is_decoding
from cloud.engine.waiting_order import slo_order_key


@dataclass(slots=True)
class SchedulerOutput:
    num_scheduled_tokens: dict[str, int] = field(default_factory=dict)  # request id -> new tokens
    scheduled: list[Request] = field(default_factory=list)  # in batch order
    preempted: list[Request] = field(default_factory=list)
    block_copies: list[tuple[int, int]] = field(default_factory=list)  # copy-on-write (src, dst)
    # requests that finished, were aborted or preempted since the last step: their rows go
    finished_req_ids: set[str] = field(default_factory=set)

    @property
    def total_num_scheduled_tokens(self) -> int:
        return sum(self.num_scheduled_tokens.values())


@dataclass(slots=True)
class StepBudget:
    """What one step may still take: tokens (max_num_batched_tokens) and, under TPOT targets,
    prompt tokens (None: no cap). A request more than one token behind computes its prompt."""

    tokens: int
    prefill_tokens: int | None = None
    max_running: int = 1 << 30  # requests running once this step's admissions are in

    def grant(self, remaining: int, chunk_limit: int) -> int:
        """New tokens for a request `remaining` tokens behind (0: none this step)."""
        granted = min(remaining, self.tokens, chunk_limit)
        if granted > 1 and self.prefill_tokens is not None:
            granted = min(granted, self.prefill_tokens)
        return granted

    def spend(self, num_new: int) -> None:
        self.tokens -= num_new
        if num_new > 1 and self.prefill_tokens is not None:
            self.prefill_tokens -= num_new


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        block_manager: BlockManager,
        max_model_len: int,
        end_of_generation_ids: frozenset[int] = frozenset(),
    ):
        self.config = config
        self.block_manager = block_manager
        self.max_model_len = max_model_len
        self.end_of_generation_ids = end_of_generation_ids
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.requests: dict[str, Request] = {}
        self.num_preemptions = 0
        self.finished_req_ids: set[str] = set()  # since the last schedule()

    def add_request(self, request: Request) -> None:
        self.requests[request.request_id] = request
        if self.config.policy in ("priority", "slo"):  # "slo" sorts again each step
            position = next(
                (
                    i
                    for i, r in enumerate(self.waiting)
                    if (r.priority, r.arrival_time) > (request.priority, request.arrival_time)
                ),
                len(self.waiting),
            )
            self.waiting.insert(position, request)
        else:
            self.waiting.append(request)

    def abort_request(self, request_id: str) -> Request | None:
        """Remove a request wherever it is; its blocks are free at once."""
        request = self.requests.pop(request_id, None)
        if request is None:
            return None
        if request in self.running:
            self.running.remove(request)
        elif request in self.waiting:
            self.waiting.remove(request)
        self.block_manager.free(request)
        self.finished_req_ids.add(request_id)
        request.status = RequestStatus.FINISHED_ABORTED
        return request

    def num_waiting_prompt_tokens(self) -> int:
        """Prompt tokens still to compute over waiting and running requests."""
        return sum(
            max(0, r.num_prompt_tokens - r.num_computed_tokens) for r in [*self.waiting, *self.running]
        )

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self, limits: StepLimits = NO_LIMITS) -> SchedulerOutput:
        """`limits`: the step's caps under latency targets (cloud/engine/step_budget.py)."""
        output = SchedulerOutput()
        max_running = min(self.config.max_num_seqs, limits.max_running or self.config.max_num_seqs)
        budget = StepBudget(self.config.max_num_batched_tokens, limits.prefill_tokens, max_running)
        if self.config.policy == "slo" and self.waiting:
            self._schedule_shortest_prompts_first(output, budget)
        else:
            self._schedule_running(output, budget, lambda _: False)
            self._schedule_waiting(output, budget)
        output.block_copies = self.block_manager.take_pending_copies()
        output.finished_req_ids, self.finished_req_ids = self.finished_req_ids, set()
        output.finished_req_ids.update(r.request_id for r in output.preempted)
        return output

    def _schedule_shortest_prompts_first(self, output: SchedulerOutput, budget: StepBudget) -> None:
        """The "slo" policy: waiting requests in their order (cloud/engine/waiting_order.py), and a
        running request's prompt chunk yields to a waiting request that goes before it; what the
        admitted requests leave of the budget goes to the chunks that yielded."""
        now = time.monotonic()
        self.waiting = deque(sorted(self.waiting, key=lambda r: slo_order_key(r, now)))
        head_key = slo_order_key(self.waiting[0], now)

        def yields(request: Request) -> bool:
            return not is_decoding(request) and slo_order_key(request, now) > head_key

        self._schedule_running(output, budget, yields)
        self._schedule_waiting(output, budget)
        self._schedule_running(output, budget, lambda r: r.request_id in output.num_scheduled_tokens)

    def _schedule_running(self, output: SchedulerOutput, budget: StepBudget, skip) -> None:
        """Running requests first, in order, except those `skip` names (a prompt chunk past the
        prompt cap waits too). Blocks short: preempt a victim (its tokens in this batch go back
        to the budget, and if it was already visited the index steps back so no request is
        skipped); if the victim is the request itself, nothing after it runs this step (vLLM v1)."""
        index = 0
        while index < len(self.running) and budget.tokens > 0:
            request = self.running[index]
            num_new = 0 if skip(request) else self._num_new_tokens(request, budget)
            if num_new == 0:
                index += 1
                continue
            while self.block_manager.allocate_slots(request, num_new) is None:
                victim = self._pick_victim()
                victim_index = self.running.index(victim)
                budget.tokens += self._preempt(victim, output)
                if victim is request:
                    return
                if victim_index < index:
                    index -= 1
            self._add_to_batch(output, request, num_new)
            budget.spend(num_new)
            index += 1

    def _schedule_waiting(self, output: SchedulerOutput, budget: StepBudget) -> None:
        """Admit waiting requests in order while budget, the running cap and blocks allow (none
        in a step that preempted). A request whose next uncached block a running request is
        computing now keeps its place and waits for it: admitted beside it, it would compute the
        same prefix again (a shared system prompt's chats, arriving while its first request
        prefilled, recomputed it: 8,016 prompt tokens instead of ~5,400 on 64 shared-prefix chats).
        Its place counts against the running cap: later requests filling the cap meanwhile had
        left it waiting for a whole generation of requests to end (36 s against 15 s)."""
        in_flight: set[int] = set()
        for running in self.running:
            self.block_manager.add_blocks_in_flight(running, in_flight)
        deferred: list[Request] = []
        while (
            self.waiting
            and budget.tokens > 0
            and len(self.running) + len(deferred) < budget.max_running
            and not output.preempted
        ):
            request = self.waiting[0]
            computed, num_cached = self.block_manager.get_computed_blocks(request)
            if self.block_manager.next_block_in_flight(request, len(computed), in_flight):
                deferred.append(self.waiting.popleft())
                continue
            num_new = budget.grant(request.num_tokens - num_cached, self.config.long_prefill_token_threshold)
            if num_new == 0 or self.block_manager.allocate_slots(request, num_new, computed) is None:
                break
            self._admit(self.waiting.popleft(), num_cached)
            self._add_to_batch(output, request, num_new)
            self.block_manager.add_blocks_in_flight(request, in_flight)
            budget.spend(num_new)
        self.waiting.extendleft(reversed(deferred))

    def _admit(self, request: Request, num_cached: int) -> None:
        self.block_manager.record_prefix_lookup(request.num_tokens, num_cached)
        request.num_computed_tokens = num_cached
        if request.status == RequestStatus.WAITING:
            request.num_cached_tokens = num_cached
        request.status = RequestStatus.RUNNING
        self.running.append(request)

    def _num_new_tokens(self, request: Request, budget: StepBudget) -> int:
        remaining = request.num_tokens - request.num_computed_tokens
        return budget.grant(remaining, self.config.long_prefill_token_threshold)

    def _add_to_batch(self, output: SchedulerOutput, request: Request, num_new: int) -> None:
        output.num_scheduled_tokens[request.request_id] = num_new
        output.scheduled.append(request)

    def _pick_victim(self) -> Request:
        if self.config.policy in ("priority", "slo"):
            return max(self.running, key=lambda r: (r.priority, r.arrival_time))
        return self.running[-1]

    def _preempt(self, request: Request, output: SchedulerOutput) -> int:
        """Back to the front of the queue; returns the tokens it had in this step's batch."""
        self.running.remove(request)
        returned = output.num_scheduled_tokens.pop(request.request_id, 0)
        if returned:  # already in this step's batch
            output.scheduled.remove(request)
        self.block_manager.free(request)
        request.status = RequestStatus.PREEMPTED
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(request)
        output.preempted.append(request)
        return returned

    def update_from_output(self, output: SchedulerOutput, sampled: dict[str, object]) -> list[Request]:
        """Advance every scheduled request; `sampled` maps request id -> the token it got (only
        requests that caught up with their tokens get one). Returns the requests that finished."""
        finished = []
        for request in output.scheduled:
            request.num_computed_tokens += output.num_scheduled_tokens[request.request_id]
            token = sampled.get(request.request_id)
            if token is not None:
                request.output_token_ids.append(token.token_id)
                request.output_logprobs.append(token)
                self._check_stop(request)
            self.block_manager.cache_full_blocks(request)
            if request.is_finished:
                self.running.remove(request)
                self.requests.pop(request.request_id, None)
                self.block_manager.free(request)
                self.finished_req_ids.add(request.request_id)
                finished.append(request)
        return finished

    def adopt(self, request: Request) -> None:
        """A forked child joins the running requests with its first token already sampled."""
        self.requests[request.request_id] = request
        self._check_stop(request)
        if request.is_finished:
            self.requests.pop(request.request_id)
            self.block_manager.free(request)
            self.finished_req_ids.add(request.request_id)
        else:
            self.running.append(request)

    def _check_stop(self, request: Request) -> None:
        reason = request.check_stop(self.end_of_generation_ids, self.max_model_len)
        if reason is not None:
            request.status = RequestStatus.finished(reason)

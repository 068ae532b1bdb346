"""LLMEngine: add requests, then `step()` = schedule -> run the model -> sample -> update.

Implements shared.engine.Engine: each step returns the tokens it sampled (deltas) and a NodeStats
snapshot; the offline `LLM` API (cloud/engine/llm.py) gathers the deltas into whole outputs.
"""

import time
import uuid
from collections.abc import Callable

import torch

from cloud.engine.block_manager import BlockManager
from cloud.engine.config import CacheConfig, SchedulerConfig
from cloud.engine.engine_args import kv_cache_gib_for, resolve_dtype
from cloud.engine.metrics import EngineMetrics
from cloud.engine.model_runner import ModelRunner
from cloud.engine.request import Request, RequestStatus
from cloud.engine.request_fork import fork_request
from cloud.engine.scheduler import Scheduler
from cloud.engine.step_budget import step_limits
from cloud.engine.step_cost_model import StepCostModel, attended_keys, attention_flops_ratio
from cloud.engine.token_interval import TokenIntervalClock
from cloud.kernels import use_cpu_threads
from cloud.layers.attention import attention_backend_for
from cloud.models.llama import LlamaModel
from cloud.models.vocab import end_of_generation_ids, grammar_compiler
from cloud.models.weights import load_weights
from shared.allocator import keep_freed_memory
from shared.batch_sampler import sample_batch
from shared.engine import EngineRequest, InvalidRequestError, NodeStats, StepOutput, StepResult
from shared.request_state import request_grammar, validate_prompt
from shared.sampling import SamplingParams
from shared.step_rates import StepRates

WARMUP_PROMPT_TOKENS = 64
WARMUP_OUTPUT_TOKENS = 3  # the first comes with the prefill; the others are decode steps
WARMUP_BATCH_PROMPT_TOKENS = 256  # each, at most: the batch fills one step's token budget
MAX_WARMUP_BATCH = 32  # larger batches are extrapolated by the router from the measured ones
MAX_PUBLISHED_BLOCKS = 4096  # the most recently cached; what a heartbeat carries for placement


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class LLMEngine:
    def __init__(
        self,
        model: str,
        *,
        dtype: str | torch.dtype = "auto",
        device: str | torch.device | None = None,
        block_size: int = 16,
        num_blocks: int | None = None,
        kv_cache_gib: float = 1.0,
        max_num_seqs: int = 64,
        max_num_batched_tokens: int = 1024,
        long_prefill_token_threshold: int | None = None,
        enable_prefix_caching: bool = True,
        max_model_len: int | None = None,
        policy: str = "fcfs",
        gpu_memory_utilization: float | None = None,
        num_threads: int | Callable[[], int] | None = None,
    ):
        """`dtype`: vLLM's names or a torch dtype (cloud/engine/engine_args.py); the KV cache holds
        `num_blocks`, else `gpu_memory_utilization` of the free memory, else `kv_cache_gib`;
        on the CPU its steps run on `num_threads` threads (default: torch's count here), or on
        as many as that function answers before each step (hybridgw/shared_cores.py)."""
        started = time.perf_counter()
        keep_freed_memory()
        self.device = torch.device(device) if device is not None else default_device()
        threads = num_threads or torch.get_num_threads()
        self.threads_for_step: Callable[[], int] = threads if callable(threads) else lambda: threads
        dtype = resolve_dtype(dtype, self.device)
        self.model_config, tensors, self.metadata = load_weights(model, dtype, self.device)
        if gpu_memory_utilization is not None:
            kv_cache_gib = kv_cache_gib_for(gpu_memory_utilization, self.device)
        config = self.model_config
        if num_blocks is None:
            bytes_per_block = (
                2 * config.num_layers * block_size * config.kv_dim * torch.finfo(dtype).bits // 8
            )
            num_blocks = max(1, int(kv_cache_gib * (1 << 30)) // bytes_per_block)
        self.cache_config = CacheConfig(block_size, num_blocks, enable_prefix_caching)
        self.scheduler_config = SchedulerConfig(
            max_num_seqs,
            max_num_batched_tokens,
            long_prefill_token_threshold or min(512, max_num_batched_tokens),
            policy,
        )
        # no longer than the KV cache holds: a request that outgrew it would preempt itself forever
        self.max_model_len = min(
            max_model_len or config.context_length, config.context_length, num_blocks * block_size
        )
        self.block_manager = BlockManager(num_blocks, block_size, enable_prefix_caching)
        self.scheduler = Scheduler(
            self.scheduler_config,
            self.block_manager,
            self.max_model_len,
            end_of_generation_ids(self.metadata),
        )
        self.grammars = grammar_compiler(model, self.metadata, config.vocab_size)
        self.runner = ModelRunner(
            LlamaModel(config, tensors, attention_backend_for(self.device, dtype)),
            config,
            num_blocks,
            block_size,
            self.max_model_len,
            max_num_seqs,
        )
        self.metrics = EngineMetrics(self.scheduler, self.block_manager)
        self.rates = StepRates()  # measured prefill and decode speed, for the gateway's router
        self.step_costs = StepCostModel()  # the step time under load, for the latency limits
        self.token_intervals = TokenIntervalClock()  # what the step cost model learns from
        self._pending_forks: dict[str, int] = {}  # request id -> n, forked once its prompt is computed
        self.load_seconds = time.perf_counter() - started

    def add(self, request: EngineRequest) -> None:
        if request.request_id in self.scheduler.requests:
            raise InvalidRequestError(f"request id {request.request_id!r} is already in use")
        validate_prompt(request, self.model_config.vocab_size, self.max_model_len)
        grammar = request_grammar(request, self.grammars)
        end_ids = self.scheduler.end_of_generation_ids
        self.scheduler.add_request(Request.from_engine_request(request, grammar=grammar, end_ids=end_ids))
        if request.sampling_params.n > 1:
            self._pending_forks[request.request_id] = request.sampling_params.n

    def warmup(self) -> None:
        """One short request through the model before the first real one, then a batch of them
        as large as the engine runs (up to MAX_WARMUP_BATCH), so the node reports a measured
        prefill speed and its decode step time alone and in a full batch from its first
        heartbeat (the router would otherwise guess), and no first-call cost lands on a user.
        The batch's prompts fill one step's token budget, and its step sets the prefill rate: a
        burst's prompts are computed in such steps (weighed with the single short prompt's, the
        cloud reported 400 tokens/s where it computes a burst of 32 chats' prompts at 2,500).
        The request metrics do not count them; their prompts' blocks stay in the prefix cache as
        free blocks. The first request runs once untimed: its steps load or compile the kernels
        (from a cold numba cache the cloud reported 2.7 s per decode step where it decodes in
        0.05 s, and a burst's first requests were placed by it)."""
        room = self.max_model_len - WARMUP_OUTPUT_TOKENS - 1
        metrics, self.metrics = self.metrics, EngineMetrics(self.scheduler, self.block_manager)
        try:
            prompt_tokens = max(1, min(WARMUP_PROMPT_TOKENS, room))
            self._warmup_batch(1, prompt_tokens, self.model_config.vocab_size // 2)  # other blocks
            self.rates = StepRates()  # what the first calls cost is not the engine's speed
            self._warmup_batch(1, prompt_tokens)
            batch_size = min(self.scheduler_config.max_num_seqs, MAX_WARMUP_BATCH)
            if batch_size > 1:  # prompts that fill a step's token budget: the prefill rate under load
                budget_share = self.scheduler_config.max_num_batched_tokens // batch_size
                self.rates.prefill_tokens_per_s = 0.0
                self._warmup_batch(batch_size, max(1, min(WARMUP_BATCH_PROMPT_TOKENS, budget_share, room)))
            # the quiet machine's speeds: what load scales
            self.step_costs.set_reference(self.rates, attention_flops_ratio(self.model_config))
        finally:
            self.metrics = metrics

    def _warmup_batch(self, batch_size: int, prompt_tokens: int, first_token: int = 0) -> None:
        vocab_size = self.model_config.vocab_size
        params = SamplingParams(temperature=0.0, max_tokens=WARMUP_OUTPUT_TOKENS, ignore_eos=True)
        for index in range(batch_size):  # distinct prompts: no prefix-cache hit shortens a prefill
            start = first_token + index * prompt_tokens
            prompt = [(start + i) % vocab_size for i in range(prompt_tokens)]
            self.add(EngineRequest(f"warmup-{uuid.uuid4().hex}", tuple(prompt), params))
        while self.has_work():
            self.step()

    def abort(self, request_id: str) -> bool:
        request = self.scheduler.abort_request(request_id)
        if request is None:
            return False
        self._pending_forks.pop(request_id, None)
        self.metrics.record_finished([request])
        return True

    def has_work(self) -> bool:
        return self.scheduler.has_unfinished_requests()

    def close(self) -> None:
        """Nothing to release: torch frees the cache with the engine."""

    def step(self) -> StepResult:
        step_started = time.perf_counter()
        limits = step_limits(
            self.scheduler.running,
            self.scheduler.waiting,
            self.step_costs,
            self.scheduler_config.max_num_seqs,
        )
        output = self.scheduler.schedule(limits)
        if not output.scheduled:
            self.token_intervals.idle()
            return StepResult((), self.stats())
        num_prefill_tokens, num_keys = _step_work(output)
        started = time.perf_counter()
        if self.device.type == "cpu":
            use_cpu_threads(self.threads_for_step())  # on whichever thread steps the engine
        request_ids, logits, prompt_rows = self.runner.execute_model(output, self.block_manager)
        _record_prompt_logprobs(logits, len(request_ids), prompt_rows)
        requests = {r.request_id: r for r in output.scheduled}
        children = self._sample_and_update(output, requests, request_ids, logits)
        seconds = time.perf_counter() - started  # the whole step, sampling included
        num_decodes = output.total_num_scheduled_tokens - num_prefill_tokens
        self.rates.record_step(seconds, num_prefill_tokens, num_decodes)
        interval = self.token_intervals.step_ended(step_started, self.scheduler.has_unfinished_requests())
        self.step_costs.record(interval, num_decodes, num_prefill_tokens, num_keys)
        deltas = [_last_token(requests[r]) for r in request_ids] + [_last_token(c) for c in children]
        return StepResult(tuple(deltas), self.stats())

    def _sample_and_update(self, output, requests: dict[str, Request], request_ids, logits) -> list[Request]:
        """Samples the next token of each request in `request_ids` (logits' first rows), hands
        them to the scheduler and forks the n > 1 requests whose prompt was just computed; the
        forked children."""
        now = time.monotonic()
        samplers = [requests[r].sampler for r in request_ids]
        tokens = sample_batch(logits[: len(request_ids)], samplers) if request_ids else []
        for request_id in request_ids:
            requests[request_id].first_token_time = requests[request_id].first_token_time or now
        forks = [(requests[r], logits[row]) for row, r in enumerate(request_ids) if r in self._pending_forks]
        finished = self.scheduler.update_from_output(output, dict(zip(request_ids, tokens, strict=True)))
        children = [
            child
            for parent, row in forks
            for child in fork_request(
                parent,
                self._pending_forks.pop(parent.request_id),
                row,
                now,
                self.block_manager,
                self.scheduler,
                self.grammars,
            )
        ]
        self.metrics.record_finished(finished + [child for child in children if child.is_finished])
        return children

    def stats(self) -> NodeStats:
        metrics = self.metrics
        return NodeStats(
            kind="cloud",
            num_running=len(self.scheduler.running),
            num_waiting=len(self.scheduler.waiting),
            max_running=self.scheduler_config.max_num_seqs,
            kv_usage=metrics.kv_cache_usage,
            context_length=self.max_model_len,
            requests_total=metrics.num_finished,
            tokens_generated_total=metrics.num_generated_tokens,
            prefill_tokens_per_s=self.rates.prefill_tokens_per_s,
            decode_tokens_per_s=self.rates.decode_tokens_per_s,
            decode_steps=self.rates.decode_steps(),
            num_waiting_prompt_tokens=self.scheduler.num_waiting_prompt_tokens(),
            cached_block_hashes=self.block_manager.cached_block_hashes(MAX_PUBLISHED_BLOCKS),
            prefix_block_size=self.cache_config.block_size,
        )


def _step_work(output) -> tuple[int, int]:
    """(prompt tokens, attended keys) of a scheduled step: what its cost is learned from."""
    num_prefill_tokens = num_keys = 0
    for request in output.scheduled:
        num_new = output.num_scheduled_tokens[request.request_id]
        if request.num_computed_tokens < request.num_prompt_tokens:
            num_prefill_tokens += num_new
        num_keys += attended_keys(request.num_computed_tokens, num_new)
    return num_prefill_tokens, num_keys


def _record_prompt_logprobs(logits, first_row: int, prompt_rows) -> None:
    """The prompt-logprob rows follow the `first_row` sampling rows, request after request."""
    offset = first_row
    for request, wanted in prompt_rows:
        request.record_prompt_logprobs(logits[offset : offset + len(wanted)].cpu().numpy(), wanted)
        offset += len(wanted)


def _last_token(request: Request) -> StepOutput:
    """The token a request got in this step, as a delta."""
    return StepOutput(
        request.request_id,
        request.output_logprobs[-1],
        len(request.output_token_ids) - 1,
        request.finish_reason,
        request.num_prompt_tokens,
        request.num_cached_tokens,
        tuple(request.prompt_logprobs) if len(request.output_token_ids) == 1 else (),
    )


__all__ = ["LLMEngine", "RequestStatus"]

"""The edge engine: N slots, each with its own KV cache; one step decodes all active slots together.

Each `step()` builds one flat batch: a decode token for every running request first, then prompt
chunks (at most `prefill_chunk` tokens per request, `max_batch_tokens` in all), so a long prompt
is prefilled over several steps while the others keep decoding.
"""

import os
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from edge.background_kernels import BackgroundKernels
from edge.embedding import check_input, embed, pooling_type
from edge.kernels.isa import running_kernels
from edge.kv_cache import KVCache
from edge.linear import BLAS_MIN_ROWS
from edge.model import LlamaModel
from edge.prefill_attention import MIN_CHUNK
from edge.request import Request
from edge.slot_prefixes import PREFIX_BLOCK_SIZE, SlotPrefixes
from edge.weights import ModelWeights
from formats.gguf_reader import GGUFReader
from formats.model_config import ModelConfig
from formats.tokenizer.vocab import Vocab
from shared.allocator import keep_freed_memory
from shared.batch_sampler import sample_batch
from shared.engine import EngineRequest, InvalidRequestError, NodeStats, StepOutput, StepResult
from shared.grammar_matcher import GrammarCompiler
from shared.request_state import request_grammar, validate_prompt
from shared.sampling import SampledToken, Sampler, SamplingParams
from shared.step_rates import MIN_PREFILL_TOKENS, StepRates

BACKENDS = ("numba", "onnxruntime")
PRODUCTS_TIMEOUT_S = 600  # a first start's wait for the products compiled beside it; then it compiles them


@dataclass(slots=True)
class EngineConfig:
    model_path: str
    num_slots: int = 4
    context_size: int = 4096  # in all, shared equally by the slots (llama.cpp's -c with -np)
    num_threads: int = os.cpu_count() or 1
    prefill_chunk: int = 256
    max_batch_tokens: int = 512
    backend: str = "numba"  # or "onnxruntime": the same weights through MatMulNBits (edge/onnx_model.py)
    enable_prefix_caching: bool = True  # reuse a free slot's cached prompt prefix (edge/slot_prefixes.py)
    # uncached, the fused decode layer and the long-prompt paths compile in another process while
    # this one serves without them (edge/background_kernels.py); else here, on their first use
    background_compile: bool = False

    def __post_init__(self) -> None:
        if self.num_slots < 1 or self.num_threads < 1:
            raise ValueError("slots and threads must be at least 1")
        if self.context_size < 2 * self.num_slots:
            raise ValueError(f"context size {self.context_size} is too small for {self.num_slots} slots")
        if not 1 <= self.prefill_chunk <= self.max_batch_tokens:
            raise ValueError("prefill_chunk must be between 1 and max_batch_tokens")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {self.backend!r}")


class EdgeEngine:
    """Owns the model, the KV cache and the requests; implements shared.engine.Engine (one thread
    drives it: shared/async_engine.py for a serving node)."""

    def __init__(self, config: EngineConfig):
        started = time.perf_counter()
        self.config = config
        _limit_blas_threads()
        keep_freed_memory()
        self.reader = GGUFReader(config.model_path)
        self.model_config = ModelConfig.from_reader(self.reader)
        self.vocab = Vocab.from_metadata(self.reader.metadata)
        self.grammars = GrammarCompiler.from_vocab(self.vocab, self.model_config.vocab_size)
        self.pooling = pooling_type(self.reader.metadata, self.model_config.arch)
        weights = ModelWeights.from_reader(self.reader, self.model_config)
        if config.backend == "onnxruntime":
            from edge.onnx_model import OnnxLlamaModel  # onnx and onnxruntime load only when asked for

            self.model = OnnxLlamaModel(self.model_config, weights, config.num_threads)
            self.kernels = {"backend": "onnxruntime"}
        else:
            self.model = LlamaModel(self.model_config, weights, config.num_threads)
            # the kernel paths the CPU numba compiles for selects (/health/ready, run --verbose)
            self.kernels = {"backend": "numba", **running_kernels()}
        self.background = None
        if config.background_compile and isinstance(self.model, LlamaModel):
            # the products beside the node when the machine has a second core: a node on one
            # thread (`hybridgw up` on two cores) compiles on one; its cloud engine loads after it
            beside = len(os.sched_getaffinity(0)) >= 2
            self.background = BackgroundKernels(self.model, config.model_path, beside)
            self.background.start()
        self.slot_context = min(config.context_size // config.num_slots, self.model_config.context_length)
        self.cache = KVCache(self.model_config, config.num_slots, self.slot_context)
        self.free_slots: deque[int] = deque(range(config.num_slots))  # freed longest ago first
        self.prefixes = SlotPrefixes(config.num_slots)  # what each free slot's cache still holds
        self.waiting: deque[Request] = deque()
        self.running: dict[str, Request] = {}
        self.rates = StepRates()  # measured prefill and decode speed, for the gateway's router
        self.num_finished = 0
        self.num_generated_tokens = 0
        self.load_seconds = time.perf_counter() - started

    def warmup(self) -> threading.Thread:
        """Load every kernel before the first request so none is compiled or loaded on its path.

        The decode path runs once here (a one-token forward), then once more, timed, and twice
        with a token in every slot, the second timed (the first touches every slot's cache: timed,
        it was 8x a real step), so the node reports its decode step time at batch 1 and at a full
        batch from its first Stats call (the router would otherwise guess); the
        prefill path's only extra kernel is loaded on a background thread, so the first token is
        not delayed by it. Returns that thread (join it to wait)."""
        if self.background is not None and self.background.pending and self.background.beside:
            self.model.warm_other_kernels(self.cache)  # the other process compiles the products
            self._warm_sampler()  # meanwhile too
            self.background.await_products(PRODUCTS_TIMEOUT_S)
        one = np.zeros(1, dtype=np.int32)
        self.model.forward(one, one, one, np.array([0]), self.cache)
        for batch_size in sorted({1, self.config.num_slots}):
            zeros = np.zeros(batch_size, dtype=np.int32)
            slot_ids = np.arange(batch_size, dtype=np.int32)
            self.model.forward(zeros, slot_ids, zeros, np.arange(batch_size), self.cache)  # first touch
            started = time.perf_counter()
            self.model.forward(zeros, slot_ids, zeros, np.arange(batch_size), self.cache)
            self.rates.record_decode(batch_size, time.perf_counter() - started)
        if self.background is not None:
            self.background.release()  # the decode path's kernels are cached: it compiles the rest
        thread = threading.Thread(target=self.model.load_prefill_kernels, name="edge-warmup", daemon=True)
        thread.start()
        return thread

    def _warm_sampler(self) -> None:
        """The sampler's kernels, greedy and drawn, on logits of the model's shape."""
        logits = np.zeros((2, self.model_config.vocab_size), dtype=np.float32)
        params = (SamplingParams(temperature=0), SamplingParams(temperature=1, seed=0))
        sample_batch(logits, [Sampler(p, [0]) for p in params])

    def measure_prefill(self, warmup: threading.Thread) -> None:
        """Once the prefill kernels are loaded (`warmup`'s thread), one timed prompt chunk on slot
        0, so a serving node reports a measured prefill speed from its first Stats call too (a
        real request overwrites the slot's cache from position 0). A whole chunk, as prompts are
        computed under load (32 tokens measured 130 tokens/s where chunks run at 230). On a first
        start whose chunk kernels still compile, prompts run on the per-row kernels, whose cost
        grows with the rows: 32 rows measure that rate (a whole chunk took a second of its start)."""
        warmup.join()
        chunk = self.config.prefill_chunk if self.model.prefill_ready else 2 * MIN_PREFILL_TOKENS
        num_tokens = min(max(2 * MIN_PREFILL_TOKENS, chunk), self.slot_context)
        zeros = np.zeros(num_tokens, dtype=np.int32)
        started = time.perf_counter()
        self.model.forward(
            zeros, zeros, np.arange(num_tokens, dtype=np.int32), np.array([num_tokens - 1]), self.cache
        )
        self.rates.record_step(time.perf_counter() - started, num_tokens, 0)

    def prepare_to_serve(self) -> None:
        """What a serving node runs before its first request: every kernel loaded, its decode
        and prefill speeds measured."""
        self.measure_prefill(self.warmup())
        self.load_batch_kernels()

    def load_batch_kernels(self) -> None:
        """One untimed step of a prompt chunk long enough for the BLAS tiles beside a token
        in another slot (or apart in the same one), sampled greedily and drawn: the per-row
        kernels such a step takes and the sampler's, so none is compiled on a request's path.
        From a cold kernel cache, a fresh node's first step of decodes beside a prompt compiled
        them for 17 s: the gateway moved its requests away and cooled the node down, and turned
        private requests away meanwhile. Both positions are overwritten by real requests."""
        last = self.config.num_slots - 1
        chunk = min(max(BLAS_MIN_ROWS, MIN_CHUNK), self.slot_context - 2)
        slot_ids = np.array([last] * chunk + [0], dtype=np.int32)
        positions = np.array([*range(chunk), 0 if last else chunk + 1], dtype=np.int32)
        token_ids = np.zeros(chunk + 1, dtype=np.int32)
        logits = self.model.forward(token_ids, slot_ids, positions, np.array([chunk - 1, chunk]), self.cache)
        params = (SamplingParams(temperature=0), SamplingParams(temperature=1, seed=0))
        sample_batch(logits, [Sampler(p, [0]) for p in params])

    def add(self, request: EngineRequest) -> None:
        if request.request_id in self.running or any(
            r.request_id == request.request_id for r in self.waiting
        ):
            raise InvalidRequestError(f"request id {request.request_id!r} is already in use")
        validate_prompt(request, self.model_config.vocab_size, self.slot_context)
        grammar = request_grammar(request, self.grammars)
        end_ids = self.vocab.end_of_generation_ids
        self.waiting.append(Request.from_engine_request(request, grammar=grammar, end_ids=end_ids))

    def embed(self, token_ids: list[int]) -> np.ndarray:
        """The prompt's pooled, normalized embedding (hidden,) f32 (edge/embedding.py)."""
        if self.pooling is None:
            raise InvalidRequestError("this model's file asks for no pooling: it gives no embeddings")
        check_input(token_ids, self.model_config.vocab_size, self.slot_context)
        return embed(self.model, self.model_config, token_ids, self.config.prefill_chunk, self.pooling)

    def abort(self, request_id: str) -> bool:
        """Drop a request wherever it is; its slot is free for the next step."""
        for request in self.waiting:
            if request.request_id == request_id:
                self.waiting.remove(request)
                self.num_finished += 1
                return True
        request = self.running.pop(request_id, None)
        if request is None:
            return False
        self._release(request)
        self.num_finished += 1
        return True

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def step(self) -> StepResult:
        self._admit()
        batch = self._schedule()
        if not batch:
            return StepResult((), self.stats())
        started = time.perf_counter()
        num_prefill = sum(num_new for request, num_new in batch if request.is_prefilling)
        token_ids, slot_ids, positions, logits_rows, sampled, prompt_rows = _flatten(batch)
        logits = self.model.forward(token_ids, slot_ids, positions, logits_rows, self.cache)
        for request, num_new in batch:
            request.num_computed_tokens += num_new
        offset = len(sampled)  # prompt-logprob rows follow the sampling rows
        for request, wanted in prompt_rows:
            request.record_prompt_logprobs(logits[offset : offset + len(wanted)], wanted)
            offset += len(wanted)
        tokens = sample_batch(logits[: len(sampled)], [request.sampler for request in sampled])
        outputs = tuple(
            self._append_token(request, token) for request, token in zip(sampled, tokens, strict=True)
        )
        self.rates.record_step(time.perf_counter() - started, num_prefill, len(token_ids) - num_prefill)
        return StepResult(outputs, self.stats())

    def _admit(self) -> None:
        """Free slots go to waiting requests by priority (lower first), then arrival; each to the
        free slot whose cache holds the longest prefix of its prompt (edge/slot_prefixes.py)."""
        while self.waiting and self.free_slots:
            request = min(self.waiting, key=_admission_order)
            self.waiting.remove(request)
            slot_id, num_cached = self.free_slots[0], 0
            if self.config.enable_prefix_caching:
                slot_id, num_cached = self.prefixes.choose(
                    list(self.free_slots), request.prompt_token_ids, request.cache_salt
                )
                if request.sampling_params.prompt_logprobs is not None:
                    num_cached = 0  # every prompt position's logits are needed
            self.free_slots.remove(slot_id)
            request.slot_id = slot_id
            request.num_computed_tokens = request.num_cached_tokens = num_cached
            self.running[request.request_id] = request

    def _release(self, request: Request) -> None:
        """The request leaves its slot; what it computed stays there for a later prompt."""
        self.free_slots.append(request.slot_id)
        if self.config.enable_prefix_caching:
            computed = request.all_token_ids[: request.num_computed_tokens]
            self.prefixes.release(request.slot_id, request.cache_salt, computed)

    def _schedule(self) -> list[tuple[Request, int]]:
        """(request, number of new tokens) for this step: decodes first, then prompt chunks."""
        budget = self.config.max_batch_tokens
        batch = []
        for request in self.running.values():
            if not request.is_prefilling and budget > 0:
                batch.append((request, 1))
                budget -= 1
        for request in self.running.values():
            if request.is_prefilling and budget > 0:
                remaining = request.num_prompt_tokens - request.num_computed_tokens
                chunk = min(remaining, self.config.prefill_chunk, budget)
                batch.append((request, chunk))
                budget -= chunk
        return batch

    def _append_token(self, request: Request, token: SampledToken) -> StepOutput:
        request.output_token_ids.append(token.token_id)
        if request.first_token_time is None:
            request.first_token_time = time.monotonic()
        reason = request.check_stop(self.vocab.end_of_generation_ids, self.slot_context)
        if reason is not None:
            request.finish_reason = reason
            self.running.pop(request.request_id)
            self._release(request)
            self.num_finished += 1
        self.num_generated_tokens += 1
        return StepOutput(
            request.request_id,
            token,
            len(request.output_token_ids) - 1,
            reason,
            request.num_prompt_tokens,
            request.num_cached_tokens,
            tuple(request.prompt_logprobs) if len(request.output_token_ids) == 1 else (),
        )

    def close(self) -> None:
        if self.background is not None:
            self.background.close()
        self.model.linear.close()

    @property
    def cache_capacity(self) -> int:
        """Tokens the slots' caches hold in all."""
        return self.slot_context * self.config.num_slots

    def stats(self) -> NodeStats:
        running = list(self.running.values())
        return NodeStats(
            kind="edge",
            num_running=len(running),
            num_waiting=len(self.waiting),
            max_running=self.config.num_slots,
            kv_usage=sum(r.num_computed_tokens for r in running) / self.cache_capacity,
            context_length=self.slot_context,
            requests_total=self.num_finished,
            tokens_generated_total=self.num_generated_tokens,
            prefill_tokens_per_s=self.rates.prefill_tokens_per_s,
            decode_tokens_per_s=self.rates.decode_tokens_per_s,
            decode_steps=self.rates.decode_steps(),
            num_waiting_prompt_tokens=sum(
                max(0, r.num_prompt_tokens - r.num_computed_tokens) for r in [*self.waiting, *running]
            ),
            cached_block_hashes=self.prefixes.cached_block_hashes(),
            prefix_block_size=PREFIX_BLOCK_SIZE,
            compiling=() if self.background is None else self.background.pending,
        )


def _admission_order(request: Request) -> tuple[int, float]:
    return request.priority, request.arrival_time


def _flatten(batch: list[tuple[Request, int]]):
    """The step's tokens as flat arrays, which requests get a sampled token (in logits order),
    and after those the rows of prompt positions whose logprobs a request asks for."""
    token_ids, slot_ids, positions, logits_rows, sampled, prompt_rows, wanted_rows = (
        [],
        [],
        [],
        [],
        [],
        [],
        [],
    )
    for request, num_new in batch:
        start, first_row = request.num_computed_tokens, len(token_ids)
        token_ids.extend(request.all_token_ids[start : start + num_new])
        slot_ids.extend([request.slot_id] * num_new)
        positions.extend(range(start, start + num_new))
        if start + num_new >= request.num_prompt_tokens:  # the chunk reaches the end of the prompt
            logits_rows.append(len(token_ids) - 1)
            sampled.append(request)
        if wanted := request.prompt_logprob_positions(start, num_new):
            prompt_rows.append((request, wanted))
            wanted_rows.extend(first_row + p - start for p in wanted)
    logits_rows += wanted_rows
    as_int32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    return (
        as_int32(token_ids),
        as_int32(slot_ids),
        as_int32(positions),
        np.asarray(logits_rows, np.int64),
        sampled,
        prompt_rows,
    )


def _limit_blas_threads() -> None:
    """Our tile threads already use every core: BLAS inside each must stay single-threaded."""
    import threadpoolctl

    threadpoolctl.threadpool_limits(1, user_api="blas")

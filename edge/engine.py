"""The edge engine: N slots, each with its own KV cache; one step decodes all active slots together.

Each `step()` builds one flat batch: a decode token for every running sequence first, then prompt
chunks (at most `prefill_chunk` tokens per sequence, `max_batch_tokens` in all), so a long prompt
is prefilled over several steps while the others keep decoding.
"""

import os
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from edge.kv_cache import ContextOverflowError, KVCache
from edge.model import LlamaModel
from edge.sequence import Sequence, new_sequence
from edge.slot_prefixes import PREFIX_BLOCK_SIZE, SlotPrefixes
from edge.stats import EngineStats
from edge.weights import ModelWeights
from formats.gguf_reader import GGUFReader
from formats.model_config import ModelConfig
from formats.tokenizer.vocab import Vocab
from shared.sampling import SamplingParams
from shared.step_output import FinishReason, InvalidRequestError, StepOutput
from shared.step_rates import MIN_PREFILL_TOKENS, decode_steps_field

BACKENDS = ("numba", "onnxruntime")


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
    """Owns the model, the KV cache and the sequences; not thread-safe (see shared.async_engine)."""

    def __init__(self, config: EngineConfig):
        started = time.perf_counter()
        self.config = config
        _limit_blas_threads()
        self.reader = GGUFReader(config.model_path)
        self.model_config = ModelConfig.from_reader(self.reader)
        self.vocab = Vocab.from_metadata(self.reader.metadata)
        weights = ModelWeights.from_reader(self.reader, self.model_config)
        if config.backend == "onnxruntime":
            from edge.onnx_model import OnnxLlamaModel  # onnx and onnxruntime load only when asked for

            self.model = OnnxLlamaModel(self.model_config, weights, config.num_threads)
        else:
            self.model = LlamaModel(self.model_config, weights, config.num_threads)
        self.slot_context = min(config.context_size // config.num_slots, self.model_config.context_length)
        self.cache = KVCache(self.model_config, config.num_slots, self.slot_context)
        self.free_slots: deque[int] = deque(range(config.num_slots))  # freed longest ago first
        self.prefixes = SlotPrefixes(config.num_slots)  # what each free slot's cache still holds
        self.waiting: deque[Sequence] = deque()
        self.running: dict[str, Sequence] = {}
        self.stats = EngineStats()
        self.load_seconds = time.perf_counter() - started

    def warmup(self) -> threading.Thread:
        """Load every kernel before the first request so none is compiled or loaded on its path.

        The decode path runs once here (a one-token forward), then once more, timed, and once
        with a token in every slot, timed, so the node reports its decode step time at batch 1
        and at a full batch from its first Stats call (the router would otherwise guess); the
        prefill path's only extra kernel is loaded on a background thread, so the first token is
        not delayed by it. Returns that thread (join it to wait)."""
        one = np.zeros(1, dtype=np.int32)
        self.model.forward(one, one, one, np.array([0]), self.cache)
        for batch_size in sorted({1, self.config.num_slots}):
            zeros = np.zeros(batch_size, dtype=np.int32)
            slot_ids = np.arange(batch_size, dtype=np.int32)
            started = time.perf_counter()
            self.model.forward(zeros, slot_ids, zeros, np.arange(batch_size), self.cache)
            self.stats.record_decode(batch_size, time.perf_counter() - started)
        thread = threading.Thread(target=self.model.load_prefill_kernels, name="edge-warmup", daemon=True)
        thread.start()
        return thread

    def measure_prefill(self, warmup: threading.Thread) -> None:
        """Once the prefill kernels are loaded (`warmup`'s thread), one timed prompt chunk on slot
        0, so a serving node reports a measured prefill speed from its first Stats call too (a
        real request overwrites the slot's cache from position 0)."""
        warmup.join()
        num_tokens = min(2 * MIN_PREFILL_TOKENS, self.slot_context)
        zeros = np.zeros(num_tokens, dtype=np.int32)
        started = time.perf_counter()
        self.model.forward(
            zeros, zeros, np.arange(num_tokens, dtype=np.int32), np.array([num_tokens - 1]), self.cache
        )
        self.stats.record_step(time.perf_counter() - started, num_tokens, 0)

    def add_request(
        self,
        request_id: str,
        prompt_ids: list[int],
        params: SamplingParams,
        priority: int = 0,
        cache_salt: str = "",
    ) -> None:
        if request_id in self.running or any(s.request_id == request_id for s in self.waiting):
            raise InvalidRequestError(f"request id {request_id!r} is already in use")
        if not prompt_ids:
            raise InvalidRequestError("the prompt is empty")
        if min(prompt_ids) < 0 or max(prompt_ids) >= self.model_config.vocab_size:
            raise InvalidRequestError(f"prompt token ids must lie in [0, {self.model_config.vocab_size})")
        if len(prompt_ids) >= self.slot_context:
            raise ContextOverflowError(
                f"prompt of {len(prompt_ids)} tokens does not fit the context window "
                f"of {self.slot_context} tokens"
            )
        sequence = new_sequence(request_id, prompt_ids, params, time.perf_counter(), priority)
        sequence.cache_salt = cache_salt
        self.waiting.append(sequence)
        self.stats.requests_total += 1

    def abort(self, request_id: str) -> bool:
        """Drop a request wherever it is; its slot is free for the next step."""
        for sequence in self.waiting:
            if sequence.request_id == request_id:
                self.waiting.remove(sequence)
                return True
        sequence = self.running.pop(request_id, None)
        if sequence is None:
            return False
        self._release(sequence)
        return True

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def step(self) -> list[StepOutput]:
        self._admit()
        batch = self._schedule()
        if not batch:
            return []
        started = time.perf_counter()
        num_prefill = sum(num_new for sequence, num_new in batch if sequence.is_prefilling)
        token_ids, slot_ids, positions, logits_rows, sampled = _flatten(batch)
        logits = self.model.forward(token_ids, slot_ids, positions, logits_rows, self.cache)
        for sequence, num_new in batch:
            sequence.num_computed += num_new
        outputs = [self._append_token(sequence, row) for sequence, row in zip(sampled, logits, strict=True)]
        self.stats.record_step(time.perf_counter() - started, num_prefill, len(token_ids) - num_prefill)
        return outputs

    def _admit(self) -> None:
        """Free slots go to waiting sequences by priority (lower first), then arrival; each to the
        free slot whose cache holds the longest prefix of its prompt (edge/slot_prefixes.py)."""
        while self.waiting and self.free_slots:
            sequence = min(self.waiting, key=_admission_order)
            self.waiting.remove(sequence)
            slot_id, num_cached = self.free_slots[0], 0
            if self.config.enable_prefix_caching:
                slot_id, num_cached = self.prefixes.choose(
                    list(self.free_slots), sequence.prompt_ids, sequence.cache_salt
                )
            self.free_slots.remove(slot_id)
            sequence.slot_id = slot_id
            sequence.num_computed = sequence.num_cached_tokens = num_cached
            self.running[sequence.request_id] = sequence

    def _release(self, sequence: Sequence) -> None:
        """The sequence leaves its slot; what it computed stays there for a later prompt."""
        self.free_slots.append(sequence.slot_id)
        if self.config.enable_prefix_caching:
            computed = sequence.token_ids[: sequence.num_computed]
            self.prefixes.release(sequence.slot_id, sequence.cache_salt, computed)

    def _schedule(self) -> list[tuple[Sequence, int]]:
        """(sequence, number of new tokens) for this step: decodes first, then prompt chunks."""
        budget = self.config.max_batch_tokens
        batch = []
        for sequence in self.running.values():
            if not sequence.is_prefilling and budget > 0:
                batch.append((sequence, 1))
                budget -= 1
        for sequence in self.running.values():
            if sequence.is_prefilling and budget > 0:
                remaining = len(sequence.prompt_ids) - sequence.num_computed
                chunk = min(remaining, self.config.prefill_chunk, budget)
                batch.append((sequence, chunk))
                budget -= chunk
        return batch

    def _append_token(self, sequence: Sequence, logits: np.ndarray) -> StepOutput:
        token = sequence.sampler.sample(logits)
        sequence.output_ids.append(token.token_id)
        if sequence.first_token_time is None:
            sequence.first_token_time = time.perf_counter()
        reason = self._finish_reason(sequence, token.token_id)
        if reason is not None:
            sequence.finish_reason = reason
            self.running.pop(sequence.request_id)
            self._release(sequence)
        self.stats.tokens_generated_total += 1
        return StepOutput(
            sequence.request_id,
            token,
            len(sequence.output_ids) - 1,
            reason,
            len(sequence.prompt_ids),
            sequence.num_cached_tokens,
        )

    def _finish_reason(self, sequence: Sequence, token_id: int) -> FinishReason | None:
        params = sequence.params
        if token_id in params.stop_token_ids:
            return FinishReason.STOP
        if not params.ignore_eos and token_id in self.vocab.end_of_generation_ids:
            return FinishReason.STOP
        if len(sequence.output_ids) >= params.max_tokens or sequence.num_tokens >= self.slot_context:
            return FinishReason.LENGTH
        return None

    def close(self) -> None:
        self.model.linear.close()

    def node_stats(self) -> dict:
        """The NodeStats fields (shared/proto) this engine knows."""
        return {
            "kind": "edge",
            "num_running": len(self.running),
            "num_waiting": len(self.waiting),
            "max_running": self.config.num_slots,
            "kv_usage": self.kv_usage,
            "prefill_tokens_per_s": self.stats.prefill_tokens_per_s,
            "decode_tokens_per_s": self.stats.decode_tokens_per_s,
            "context_length": self.slot_context,
            "requests_total": self.stats.requests_total,
            "tokens_generated_total": self.stats.tokens_generated_total,
            "decode_steps": decode_steps_field(self.stats),
            "cached_block_hashes": self.prefixes.cached_block_hashes(),
            "prefix_block_size": PREFIX_BLOCK_SIZE,
            "num_waiting_prompt_tokens": sum(
                max(0, len(s.prompt_ids) - s.num_computed) for s in [*self.waiting, *self.running.values()]
            ),
        }

    @property
    def kv_usage(self) -> float:
        used = sum(s.num_computed for s in self.running.values())
        return used / (self.slot_context * self.config.num_slots)


def _admission_order(sequence: Sequence) -> tuple[int, float]:
    return sequence.priority, sequence.arrival_time


def _flatten(batch: list[tuple[Sequence, int]]):
    """The step's tokens as flat arrays, and which sequences get a sampled token (in logits order)."""
    token_ids, slot_ids, positions, logits_rows, sampled = [], [], [], [], []
    for sequence, num_new in batch:
        start = sequence.num_computed
        token_ids.extend(sequence.token_ids[start : start + num_new])
        slot_ids.extend([sequence.slot_id] * num_new)
        positions.extend(range(start, start + num_new))
        if start + num_new >= len(sequence.prompt_ids):  # the chunk reaches the end of the prompt
            logits_rows.append(len(token_ids) - 1)
            sampled.append(sequence)
    as_int32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    return (
        as_int32(token_ids),
        as_int32(slot_ids),
        as_int32(positions),
        np.asarray(logits_rows, np.int64),
        sampled,
    )


def _limit_blas_threads() -> None:
    """Our tile threads already use every core: BLAS inside each must stay single-threaded."""
    import threadpoolctl

    threadpoolctl.threadpool_limits(1, user_api="blas")

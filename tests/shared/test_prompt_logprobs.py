"""Prompt logprobs (vLLM's prompt_logprobs) in both engines: each prompt token's logprob given
the tokens before it, as a direct forward over the whole prompt gives it, whatever the chunking,
never skipped by a prefix-cache hit, delivered with the first generated token."""

import numpy as np
import pytest

from cloud.engine.llm_engine import LLMEngine
from edge.engine import EdgeEngine, EngineConfig
from edge.kv_cache import KVCache
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest
from shared.sampling import SamplingParams

PROMPT = [5, 17, 3, 99, 42, 8, 250, 13, 77, 64, 21, 9, 180, 33, 4, 120, 56, 7, 300, 11]


@pytest.fixture(scope="module")
def tiny_path(tiny_model):
    return tiny_model(GGMLType.F32)


def _direct(engine: EdgeEngine) -> np.ndarray:
    """log_softmax of the logits at every prompt position, in one forward on a fresh cache."""
    n = len(PROMPT)
    cache = KVCache(engine.model_config, 1, 64)
    ids = np.asarray(PROMPT, dtype=np.int32)
    logits = engine.model.forward(
        ids, np.zeros(n, np.int32), np.arange(n, dtype=np.int32), np.arange(n), cache
    )
    logits = logits.astype(np.float64)
    peak = logits.max(1, keepdims=True)
    return logits - peak - np.log(np.exp(logits - peak).sum(1, keepdims=True))


def _first_output(engine, params: SamplingParams, request_id: str = "r"):
    engine.add(EngineRequest(request_id, PROMPT, params))
    first = None
    while engine.has_work():
        for output in engine.step().outputs:
            if output.request_id == request_id and output.index == 0:
                first = output
    return first


PARAMS = SamplingParams(temperature=0, max_tokens=2, prompt_logprobs=3, ignore_eos=True)


def _check(first, expected: np.ndarray, tolerance: float) -> None:
    tokens = first.prompt_logprobs
    assert [t.token_id for t in tokens] == PROMPT[1:]
    for position, token in enumerate(tokens):
        row = expected[position]
        assert token.logprob == pytest.approx(row[PROMPT[position + 1]], abs=tolerance)
        assert [i for i, _ in token.top_logprobs] == list(np.argsort(-row, kind="stable")[:3])


@pytest.mark.parametrize("prefill_chunk", [4, 7, 64])
def test_edge_prompt_logprobs_equal_a_direct_forward_whatever_the_chunks(tiny_path, prefill_chunk):
    engine = EdgeEngine(
        EngineConfig(str(tiny_path), num_slots=2, context_size=64, prefill_chunk=prefill_chunk)
    )
    _check(_first_output(engine, PARAMS), _direct(engine), 1e-4)


@pytest.mark.parametrize("threshold", [4, 64])
def test_cloud_prompt_logprobs_match_the_edge_whatever_the_chunks(tiny_path, threshold):
    edge = EdgeEngine(EngineConfig(str(tiny_path), num_slots=1, context_size=64))
    cloud = LLMEngine(
        str(tiny_path), dtype="float32", num_blocks=16, block_size=4, long_prefill_token_threshold=threshold
    )
    _check(_first_output(cloud, PARAMS), _direct(edge), 2e-2)  # the edge's KV cache is f16


def test_a_cached_prompt_is_recomputed_for_its_logprobs(tiny_path):
    for engine in (
        EdgeEngine(EngineConfig(str(tiny_path), num_slots=1, context_size=64)),
        LLMEngine(str(tiny_path), num_blocks=16, block_size=4),
    ):
        plain = SamplingParams(temperature=0, max_tokens=2, ignore_eos=True)
        assert _first_output(engine, plain, "warm").prompt_logprobs == ()
        first = _first_output(engine, PARAMS, "again")
        assert first.num_cached_tokens == 0 and len(first.prompt_logprobs) == len(PROMPT) - 1

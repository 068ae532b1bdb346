"""Edge embeddings: the final hidden states of a prompt pooled as the model file says,
normalized, the same whatever the chunking, computed beside the slots without touching them."""

import numpy as np
import pytest

from edge.embedding import pooling_type
from edge.engine import EdgeEngine, EngineConfig
from edge.kv_cache import KVCache
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest, InvalidRequestError
from shared.sampling import SamplingParams

PROMPT = [5, 17, 3, 99, 42, 8, 250, 13, 77, 64, 21]


def _engine(path, prefill_chunk: int = 64) -> EdgeEngine:
    return EdgeEngine(EngineConfig(str(path), num_slots=1, context_size=64, prefill_chunk=prefill_chunk))


def _hidden(engine: EdgeEngine) -> np.ndarray:
    """(n, hidden) final hidden states of PROMPT in one pass on a fresh cache."""
    n = len(PROMPT)
    cache = KVCache(engine.model_config, 1, n)
    ids = np.asarray(PROMPT, dtype=np.int32)
    return engine.model.final_hidden_states(ids, np.zeros(n, np.int32), np.arange(n, dtype=np.int32), cache)


@pytest.mark.parametrize("prefill_chunk", [3, 64])
def test_mean_pooled_and_normalized_whatever_the_chunks(tiny_model, prefill_chunk):
    engine = _engine(tiny_model(GGMLType.Q8_0), prefill_chunk)
    expected = _hidden(engine).astype(np.float64).mean(axis=0)
    expected /= np.linalg.norm(expected)
    vector = engine.embed(PROMPT)
    assert vector.shape == (engine.model_config.hidden_size,) and vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(vector, expected, atol=1e-5)


@pytest.mark.parametrize("pooling", ["cls", "last"])
def test_cls_and_last_pooling_take_one_position(tiny_model, pooling):
    engine = _engine(tiny_model(GGMLType.Q8_0), prefill_chunk=4)
    engine.pooling = pooling
    row = _hidden(engine)[0 if pooling == "cls" else -1].astype(np.float64)
    np.testing.assert_allclose(engine.embed(PROMPT), row / np.linalg.norm(row), atol=1e-5)


def test_pooling_type_from_the_file():
    assert [pooling_type({"llama.pooling_type": value}, "llama") for value in (1, 2, 3, 0, 4)] == [
        "mean",
        "cls",
        "last",
        None,
        None,
    ]
    assert pooling_type({}, "llama") == "mean"


def test_embedding_leaves_a_running_request_unchanged_and_refuses_bad_input(tiny_model):
    engine = _engine(tiny_model(GGMLType.Q8_0))
    params = SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)

    def generate(interleave: bool) -> list[int]:
        engine.add(EngineRequest(f"r{interleave}", PROMPT, params))
        tokens = []
        while engine.has_work():
            tokens += [o.token.token_id for o in engine.step().outputs]
            if interleave:
                engine.embed([1, 2, 3, 4, 5])
        return tokens

    assert generate(True) == generate(False)
    for bad in ([], [engine.model_config.vocab_size], [1] * 65):
        with pytest.raises(InvalidRequestError):
            engine.embed(bad)

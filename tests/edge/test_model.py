"""The edge forward pass against the float reference, and the demo model against llama.cpp."""

import json
from pathlib import Path

import numpy as np
import pytest

from edge.engine import EdgeEngine, EngineConfig
from edge.kernels.dequant_blocks import KERNEL_TYPES
from formats.errors import UnsupportedModelError
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_reader import GGUFReader
from formats.gguf_writer import GGUFWriter, copy_fields
from shared.engine import EngineRequest
from tests.edge.reference_forward import reference_logits
from tests.fixtures.tiny_models import config_for

LLAMACPP = json.loads((Path(__file__).parent / "llamacpp_greedy.json").read_text())
TOKENS = [5, 17, 200, 33, 91, 250, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]


def _tolerance(ggml_type: GGMLType) -> float:
    """Relative to the largest logit. Float weights: only the f16 KV cache rounds (1e-3). Quantized
    weights: activations are rounded to 8 bits per block as ggml does, 32-element blocks (3e-2)
    or 256-element Q8_K blocks for K-quants (8e-2)."""
    if BLOCK_GEOMETRY[ggml_type].block_size == 1:
        return 1e-3
    return 3e-2 if BLOCK_GEOMETRY[ggml_type].block_size == 32 else 8e-2


def _forward(engine: EdgeEngine, ids: list[int]) -> np.ndarray:
    n = len(ids)
    as_int = lambda v: np.asarray(v, dtype=np.int32)  # noqa: E731
    return engine.model.forward(as_int(ids), as_int([0] * n), as_int(range(n)), np.arange(n), engine.cache)


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
@pytest.mark.parametrize("ggml_type", sorted(KERNEL_TYPES))
def test_logits_match_the_float_reference(tiny_model, ggml_type, arch):
    path = tiny_model(ggml_type, config=config_for(ggml_type, arch=arch))
    engine = EdgeEngine(EngineConfig(str(path), num_slots=1, context_size=64, num_threads=2))
    expected = reference_logits(path, TOKENS)
    for n in (5, len(TOKENS)):  # the decode kernels (integer for Q4_0/Q4_1/Q8_0) and the BLAS tiles
        got = _forward(engine, TOKENS[:n])
        assert np.abs(got - expected[:n]).max() <= _tolerance(ggml_type) * np.abs(expected).max()


def test_tied_embeddings(tiny_model):
    path = tiny_model(GGMLType.Q8_0, config=config_for(GGMLType.Q8_0, tied_embeddings=True))
    assert "output.weight" not in GGUFReader(path).tensors
    engine = EdgeEngine(EngineConfig(str(path), num_slots=1, context_size=64))
    expected = reference_logits(path, TOKENS[:6])
    assert np.abs(_forward(engine, TOKENS[:6]) - expected).max() <= 3e-2 * np.abs(expected).max()


def test_unsupported_architecture_is_named(tiny_model, tmp_path):
    reader = GGUFReader(tiny_model(GGMLType.F32))
    writer = GGUFWriter()
    copy_fields(writer, reader.fields.values(), skip=["general.architecture"])
    writer.add_string("general.architecture", "mamba")
    path = tmp_path / "mamba.gguf"
    writer.write(path)
    with pytest.raises(UnsupportedModelError, match="architecture 'mamba' is not supported"):
        EdgeEngine(EngineConfig(str(path)))


@pytest.fixture(scope="module", params=["numba", "onnxruntime"])
def demo_engine(demo_model_path, request):
    """The demo model on each backend: both must agree with the reference and with llama.cpp."""
    config = EngineConfig(
        str(demo_model_path), num_slots=1, context_size=256, num_threads=2, backend=request.param
    )
    engine = EdgeEngine(config)
    engine.warmup()
    return engine


@pytest.mark.demo_model
def test_demo_logits_match_the_float_reference(demo_engine, demo_model_path):
    ids = LLAMACPP["cases"][2]["prompt_ids"]
    expected = reference_logits(demo_model_path, ids)
    got = _forward(demo_engine, ids)
    # 30 layers of 8-bit activation rounding (as ggml does) on top of the Q4_1 weights: 5%.
    assert np.abs(got - expected).max() <= 5e-2 * np.abs(expected).max()
    assert (got.argmax(-1) == expected.argmax(-1)).mean() >= 0.8


@pytest.mark.demo_model
@pytest.mark.parametrize("case", LLAMACPP["cases"], ids=lambda c: c["prompt"][:20])
def test_demo_teacher_forced_logits_match_llama_cpp(demo_engine, case):
    """llama.cpp (llama-cpp-python 0.3.36) logged its 5 best logits at every generated position.
    Ours agree within 1.25 on the numba backend and 1.6 on onnxruntime (of values around 20-40:
    all round activations to 8 bits, but sum in different orders; measured worst 1.19 and 1.53),
    and llama.cpp's choice is our best or within that of it."""
    bound = 1.25 if demo_engine.config.backend == "numba" else 1.6
    prompt, generated = case["prompt_ids"], case["greedy_ids"]
    logits = _forward(demo_engine, prompt + generated)[len(prompt) - 1 : -1]
    for row, best in zip(logits, case["top_logits"], strict=True):
        for token_id, value in best:
            assert abs(row[token_id] - value) < bound
        assert row.max() - row[best[0][0]] < bound


@pytest.mark.demo_model
@pytest.mark.parametrize("case", LLAMACPP["cases"], ids=lambda c: c["prompt"][:20])
def test_demo_greedy_continuation_matches_llama_cpp(demo_engine, case):
    """Greedy tokens equal llama.cpp's up to the first near-tie, where llama.cpp's own two best
    logits are within 0.3 (llama.cpp itself flips those between batch sizes)."""
    margins = [best[0][1] - best[1][1] for best in case["top_logits"]]
    decidable = next((i for i, m in enumerate(margins) if m < 0.3), len(margins))
    from shared.sampling import SamplingParams

    demo_engine.add(
        EngineRequest("greedy", case["prompt_ids"], SamplingParams(temperature=0, max_tokens=decidable or 1))
    )
    ours = []
    while demo_engine.has_work():
        ours += [output.token.token_id for output in demo_engine.step().outputs]
    assert ours[:decidable] == case["greedy_ids"][:decidable]


def test_the_reference_has_enough_decidable_tokens():
    total = 0
    for case in LLAMACPP["cases"]:
        margins = [best[0][1] - best[1][1] for best in case["top_logits"]]
        total += next((i for i, m in enumerate(margins) if m < 0.3), len(margins))
    assert total >= 25  # the greedy comparisons above are not vacuous

"""The edge's onnxruntime backend (MatMulNBits over the file's blocks) on tiny models: logits
against the float reference, the engine's slots, and the weight types it refuses.
The demo model runs on both backends in tests/edge/test_model.py."""

import numpy as np
import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.errors import UnsupportedModelError
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest
from shared.sampling import SamplingParams
from tests.edge.reference_forward import reference_logits
from tests.edge.test_model import TOKENS, _forward, _tolerance
from tests.fixtures.tiny_models import config_for

ONNX_TYPES = [GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q8_0, GGMLType.F16, GGMLType.F32]


def _engine(path, slots: int = 1) -> EdgeEngine:
    return EdgeEngine(
        EngineConfig(
            str(path), num_slots=slots, context_size=64 * slots, num_threads=2, backend="onnxruntime"
        )
    )


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
@pytest.mark.parametrize("ggml_type", ONNX_TYPES)
def test_logits_match_the_float_reference(tiny_model, ggml_type, arch):
    path = tiny_model(ggml_type, config=config_for(ggml_type, arch=arch))
    engine = _engine(path)
    expected = reference_logits(path, TOKENS)
    for n in (1, 5, len(TOKENS)):
        got = _forward(engine, TOKENS[:n])
        assert np.abs(got - expected[:n]).max() <= _tolerance(ggml_type) * np.abs(expected).max()


def test_slots_decode_together_as_they_would_alone(tiny_model):
    path = tiny_model(GGMLType.Q4_1)
    prompts = {"a": [5, 17, 200, 33], "b": [91, 250, 7, 8, 9, 10, 11]}
    params = SamplingParams(temperature=0, max_tokens=10, ignore_eos=True)
    alone = {}
    for request_id, prompt in prompts.items():
        engine = _engine(path)
        engine.add(EngineRequest(request_id, prompt, params))
        alone[request_id] = [o.token.token_id for o in _drain(engine)]
    engine = _engine(path, slots=2)
    for request_id, prompt in prompts.items():
        engine.add(EngineRequest(request_id, prompt, params))
    together = {request_id: [] for request_id in prompts}
    for output in _drain(engine):
        together[output.request_id].append(output.token.token_id)
    assert together == alone and all(len(ids) == 10 for ids in alone.values())


def _drain(engine: EdgeEngine):
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    return outputs


def test_the_backend_refuses_weight_types_it_cannot_run_and_names_the_way_out(tiny_model):
    path = tiny_model(GGMLType.Q4_K)
    with pytest.raises(UnsupportedModelError, match=r"Q4_K.*numba backend"):
        _engine(path)


def test_an_unknown_backend_is_a_clear_error(tiny_model):
    with pytest.raises(ValueError, match="backend must be one of numba, onnxruntime"):
        EngineConfig(str(tiny_model(GGMLType.Q8_0)), backend="tensorrt")

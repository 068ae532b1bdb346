"""A first start (an empty kernel cache, in a fresh process): kernels compile only the weight types
the file holds, and the node serves while the fused decode layer compiles in another process,
then switches to it with the same tokens; a second start loads everything and compiles nothing."""

import json
import os
import subprocess
import sys

import pytest

from formats.ggml_types import GGMLType

pytestmark = pytest.mark.integration

COMPILED = """
import json, sys
from numba.core import event
compiled = []
class Names(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Names())
"""

TYPE_SETS = (
    COMPILED
    + """
import numpy as np
from edge.kernels.int8_matmul import matmul_q8_group
from edge.kernels.matmul import dequantize_rows
from edge.kernels.weight_types import weight_types
from formats import quants
from formats.ggml_types import GGMLType
rng = np.random.default_rng(0)
weight = quants.quantize(rng.standard_normal((8, 64)).astype(np.float32), GGMLType.Q4_0)
raw = np.ascontiguousarray(weight).view(np.uint8).reshape(8, -1)
out = np.empty((8, 64), np.float32)
dequantize_rows(weight_types(GGMLType.Q4_0), raw, int(GGMLType.Q4_0), 0, out)
x = rng.standard_normal((2, 64)).astype(np.float32)
products = (np.empty((2, 8), np.float32),)
matmul_q8_group(weight_types(GGMLType.Q4_0), (raw,), (int(GGMLType.Q4_0),), x, products, False)
print(json.dumps(compiled))
"""
)

START = (
    COMPILED
    + """
from edge.engine import EdgeEngine, EngineConfig
from shared.engine import EngineRequest
from shared.sampling import SamplingParams

def generate(engine, request_id):
    engine.add(EngineRequest(request_id, (1, 5, 9, 2), SamplingParams(temperature=0.0, max_tokens=8)))
    tokens = []
    while engine.has_work():
        tokens += [output.token.token_id for output in engine.step().outputs]
    return tokens

engine = EdgeEngine(EngineConfig(sys.argv[1], num_slots=1, context_size=64, background_compile=True))
result = {"fused_at_start": engine.model.fused_ready}
result["first"] = generate(engine, "a")
result["fused_later"] = engine.fused_decode.wait(600)
before = len(compiled)
result["second"] = generate(engine, "b")
result["compiled_after"] = compiled[before:]
result["compiled"] = compiled
engine.close()
print(json.dumps(result))
"""
)


def _python(script: str, cache, *args) -> dict | list:
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    environment.pop("HYBRIDGW_KERNEL_TYPES", None)  # as a node compiles: the file's types only
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_kernels_compile_the_weight_types_of_their_set_only(tmp_path):
    compiled = _python(TYPE_SETS, tmp_path / "numba")
    assert "_row_q4_0" in compiled
    others = ("_row_q4_1", "_row_q5_0", "_row_q5_1", "_row_q8_0", "_row_q4_k", "_row_q5_k", "_row_q6_k")
    assert not set(others) & set(compiled), compiled
    assert not {"_row_f16", "_row_bf16", "_row_f32"} & set(compiled)
    # one integer task loop: Q4_0's (the other seven types' loops are never typed)
    assert compiled.count("_task_loop.<locals>.task_loop") == 1, compiled


def test_a_first_start_serves_while_the_fused_layer_compiles_elsewhere(tiny_model, tmp_path):
    model = tiny_model(GGMLType.Q4_1)
    cache = tmp_path / "numba"
    first = _python(START, cache, model)
    assert first["fused_at_start"] is False  # nothing cached: compiling in the other process
    assert first["fused_later"] is True
    assert first["second"] == first["first"]  # fused and layer by layer: the same tokens
    assert "decode_layer" not in first["compiled"]  # compiled by the other process, loaded here
    assert first["compiled_after"] == []
    warm = _python(START, cache, model)
    assert warm["fused_at_start"] is True and warm["compiled"] == []
    assert warm["first"] == first["first"]

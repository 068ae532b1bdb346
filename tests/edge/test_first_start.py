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
import os
from edge.engine import EdgeEngine, EngineConfig
from shared.engine import EngineRequest
from shared.sampling import SamplingParams

def generate(engine, request_id, prompt=(1, 5, 9, 2)):
    engine.add(EngineRequest(request_id, prompt, SamplingParams(temperature=0.0, max_tokens=8)))
    tokens = []
    while engine.has_work():
        tokens += [output.token.token_id for output in engine.step().outputs]
    return tokens

threads, cores = int(sys.argv[2]), int(sys.argv[3])
os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])  # the machine this node sees
config = EngineConfig(sys.argv[1], num_slots=1, context_size=64, num_threads=threads, background_compile=True)
engine = EdgeEngine(config)
result = {"fused_at_start": engine.model.fused_ready, "prefill_at_start": engine.model.prefill_ready}
engine.warmup().join()  # as a node or `run` does: then the other process starts
LONG = tuple(range(3, 43))  # 40 tokens: a chunk for the packed product or the BLAS tiles
result["first"] = generate(engine, "a")
result["long_first"] = generate(engine, "long-a", LONG)  # through the per-row kernels
result["fused_later"] = engine.background.wait(600)
before = len(compiled)
result["second"] = generate(engine, "b")
result["long_second"] = generate(engine, "long-b", LONG)  # its own kernels, loaded from the cache
result["compiled_after"] = compiled[before:]
result["compiled"] = compiled
engine.close()
print(json.dumps(result))
"""
)


GATED = """
import json, sys
import numpy as np
from edge.kernels.int8_matmul import gated_q8
from edge.kernels.weight_types import weight_types
from formats import quants
from formats.ggml_types import GGMLType
results = {}
for name in sys.argv[1:]:
    ggml_type = GGMLType[name]
    rng = np.random.default_rng(int(ggml_type))
    raw = [
        np.ascontiguousarray(quants.quantize(rng.standard_normal((16, 64)).astype(np.float32), ggml_type))
        .view(np.uint8).reshape(16, -1)
        for _ in range(2)
    ]
    x, out = rng.standard_normal((2, 64)).astype(np.float32), np.empty((2, 16), np.float32)
    gated_q8(weight_types(ggml_type), raw[0], int(ggml_type), raw[1], int(ggml_type), x, out)
    results[name] = out.tolist()
print(json.dumps(results))
"""


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
    decoders = {name for name in compiled if name.startswith("_row_")}
    assert decoders == {"_row_q4_0_fast"}, compiled  # the tiles' decoder of Q4_0, no other type's
    # one integer task loop: Q4_0's (the other seven types' loops are never typed)
    assert [name for name in compiled if name.startswith("task_loop_q")] == ["task_loop_q4_0"], compiled


@pytest.mark.parametrize("threads, cores", [(2, 2), (1, 1)])
def test_a_first_start_serves_while_the_fused_layer_compiles_elsewhere(tiny_model, tmp_path, threads, cores):
    """A machine with a second core: the layers' products compile beside the node, in the other
    process (whatever the node's own thread count: `up` gives it one); on one core the node
    compiles them itself, and the other process only what it serves without."""
    model = tiny_model(GGMLType.Q4_1)
    cache = tmp_path / "numba"
    first = _python(START, cache, model, threads, cores)
    assert first["fused_at_start"] is first["prefill_at_start"] is False  # compiling elsewhere
    assert first["fused_later"] is True
    assert first["second"] == first["first"]  # fused and layer by layer: the same tokens
    # the fused layer compiled by the other process, loaded here; the layers' products too when
    # the machine has a second core, else compiled here
    assert "decode_layer" not in first["compiled"]
    assert ("gated_q8" in first["compiled"]) is (cores == 1), first["compiled"]
    assert first["compiled_after"] == []  # the other process compiled the long prompts' kernels too
    assert len(first["long_first"]) == len(first["long_second"]) == 8
    warm = _python(START, cache, model, threads, cores)
    assert warm["fused_at_start"] is warm["prefill_at_start"] is True and warm["compiled"] == []
    assert warm["first"] == first["first"]


def test_kernels_of_other_type_sets_compiled_by_other_processes_load_side_by_side(tmp_path):
    """Two processes each compile the gated product for one weight type into one cache, in the
    same order, so numba numbers their generated functions alike; a third loads both and must get
    each one's own result (a generated function named by its content, not by its position)."""
    cache = tmp_path / "numba"
    alone = {**_python(GATED, cache, "Q8_0"), **_python(GATED, cache, "Q4_0")}
    both = _python(GATED, cache, "Q8_0", "Q4_0")
    assert both == alone and alone["Q8_0"] != alone["Q4_0"]

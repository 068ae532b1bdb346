"""A serving node loads every kernel before its first request: none is compiled on a request's
path (from a cold kernel cache a compile stalls the node for seconds, and the gateway takes it
for hung). Checked in a fresh process, where no earlier test has compiled anything."""

import json
import subprocess
import sys

from formats.ggml_types import GGMLType

# Counts each numba kernel's compiled signatures after prepare_to_serve, serves a decode beside
# short prompts (greedy and drawn) and a long prompt, and prints the kernels that compiled more.
SERVE_AFTER_PREPARING = """
import json, sys
import numba.core.dispatcher
from edge.engine import EdgeEngine, EngineConfig
from shared.engine import EngineRequest
from shared.sampling import SamplingParams

def compiled():
    counts = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in ("edge", "shared"):
            continue
        for attribute, value in vars(module).items():
            if isinstance(value, numba.core.dispatcher.Dispatcher):
                counts[f"{name}.{attribute}"] = len(value.signatures)
    return counts

engine = EdgeEngine(EngineConfig(sys.argv[1], num_slots=3, context_size=384, num_threads=2))
engine.prepare_to_serve()
before = compiled()
greedy = SamplingParams(temperature=0, max_tokens=4, ignore_eos=True)
drawn = SamplingParams(temperature=0.8, top_p=0.9, seed=1, max_tokens=4, ignore_eos=True)
engine.add(EngineRequest("first", [5, 6, 7], greedy))
engine.step()
engine.add(EngineRequest("short", [8, 9, 10, 11], drawn))
engine.add(EngineRequest("long", list(range(20, 100)), greedy))
while engine.has_work():
    engine.step()
after = compiled()
print(json.dumps(sorted(name for name, count in after.items() if count > before.get(name, 0))))
"""


def test_a_prepared_node_compiles_no_kernel_for_a_decode_beside_prompts(tiny_model):
    model = tiny_model(GGMLType.Q8_0)
    run = subprocess.run(
        [sys.executable, "-c", SERVE_AFTER_PREPARING, str(model)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []

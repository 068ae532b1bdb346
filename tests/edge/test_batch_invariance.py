"""A request's tokens are the same whether it runs alone or beside other requests' prompt chunks
and decodes (edge/batch_rows.py), and its logprobs to 1e-5: its decode rows take the same kernels
either way; only where the scheduler cuts its prompt into other chunks can the last bits of its
cached keys move (before, a decode row sharing a step with a prompt chunk went through the BLAS
tiles and its logprobs moved by ~1e-3)."""

import numpy as np
import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest
from shared.sampling import SamplingParams

GREEDY = SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)
PROMPTS = {  # long prompts: chunks of 32 rows (BLAS tiles) in the same steps as others' decodes
    "short": [5, 6, 7],
    "long-a": list(range(20, 90)),
    "long-b": list(range(100, 160)),
    "mid": list(range(7, 19)),
}


def _engine(model_path: str, num_slots: int) -> EdgeEngine:
    config = EngineConfig(
        model_path, num_slots=num_slots, context_size=128 * num_slots, prefill_chunk=32, max_batch_tokens=80
    )
    return EdgeEngine(config)


def _run(engine: EdgeEngine, arrivals: dict[int, list[str]]) -> tuple[dict, list[set[str]]]:
    """Adds the requests due at each step; returns {request: [(token, logprob)]} and, per step,
    the requests that got a token in it."""
    tokens: dict[str, list[tuple[int, float]]] = {}
    steps: list[set[str]] = []
    while engine.has_work() or len(steps) <= max(arrivals):
        for name in arrivals.get(len(steps), []):
            engine.add(EngineRequest(name, PROMPTS[name], GREEDY))
        outputs = engine.step().outputs if engine.has_work() else ()
        steps.append({output.request_id for output in outputs})
        for output in outputs:
            tokens.setdefault(output.request_id, []).append((output.token.token_id, output.token.logprob))
    return tokens, steps


@pytest.mark.parametrize("weight_type", [GGMLType.Q4_1, GGMLType.Q4_K])
def test_tokens_and_logprobs_do_not_depend_on_the_batch(tiny_model, weight_type):
    path = str(tiny_model(weight_type))
    alone = {name: _run(_engine(path, 1), {0: [name]})[0][name] for name in PROMPTS}
    together, steps = _run(_engine(path, 4), {0: ["short", "mid"], 2: ["long-a"], 3: ["long-b"]})
    first_long_token = next(i for i, names in enumerate(steps) if "long-a" in names)
    assert first_long_token > 3 and "short" in steps[3]  # its decodes ran beside the long prefills
    assert {name: [token for token, _ in pairs] for name, pairs in together.items()} == {
        name: [token for token, _ in pairs] for name, pairs in alone.items()
    }
    for name, pairs in alone.items():
        np.testing.assert_allclose([p for _, p in together[name]], [p for _, p in pairs], rtol=0, atol=1e-5)

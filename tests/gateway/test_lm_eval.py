"""lm-eval's `local-completions` against the gateway and a real edge node, as harness users run
it (its remote tokenizer reads /tokenizer_info and /tokenize): the loglikelihood of each
continuation equals what the edge engine computes for the same tokens, called directly."""

import asyncio

import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.tokenizer import GGUFTokenizer
from shared.engine import EngineRequest
from shared.sampling import SamplingParams
from tests.fixtures.gateway_app import Gateway, edge_config

pytestmark = pytest.mark.integration
PAIRS = [
    ("The quick brown fox jumps over the", " lazy dog"),
    ("def add(a, b):\n    return", " a + b"),
    ("Hello there, general", " Kenobi"),
]


def _direct_loglikelihood(model_path, tokenizer: GGUFTokenizer, context: str, continuation: str) -> float:
    """Sum of the continuation tokens' logprobs, split as lm-eval splits the pair."""
    whole = tokenizer.encode(context + continuation, add_special=False)
    context_length = len(tokenizer.encode(context, add_special=False))
    engine = EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256))
    engine.add(EngineRequest("x", whole, SamplingParams(temperature=0, max_tokens=1, prompt_logprobs=0)))
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    return sum(t.logprob for t in outputs[0].prompt_logprobs[context_length - 1 :])


def _run_lm_eval(url: str) -> list[tuple[float, bool]]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    lm = LocalCompletionsAPI(
        base_url=f"{url}/v1/completions", model="tiny", tokenizer_backend="remote", max_retries=1, timeout=60
    )
    requests = [
        Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i) for i, pair in enumerate(PAIRS)
    ]
    return lm.loglikelihood(requests, disable_tqdm=True)


async def test_local_completions_loglikelihood_equals_the_engines(model_path, edge_node):
    tokenizer = GGUFTokenizer.from_file(model_path)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        results = await asyncio.to_thread(_run_lm_eval, gw.url)  # lm-eval's client blocks
    expected = [_direct_loglikelihood(model_path, tokenizer, *pair) for pair in PAIRS]
    assert [score for score, _ in results] == pytest.approx(expected, abs=1e-4)
    assert all(score < 0 for score in expected)

"""AsyncEngine: a real edge engine in its thread, its tokens streamed to asyncio."""

import asyncio

import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from shared.async_engine import AsyncEngine
from shared.sampling import SamplingParams

PROMPT = [1, 2, 3, 4]


def _engine_tokens(model_path, max_tokens: int) -> list[int]:
    engine = EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256))
    engine.add_request("x", PROMPT, SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True))
    tokens = []
    while engine.has_work():
        tokens += [o.token.token_id for o in engine.step()]
    return tokens


async def test_a_lagging_consumer_gets_the_ready_tokens_together_none_lost(tiny_model):
    model_path = tiny_model(GGMLType.Q8_0)
    expected = _engine_tokens(model_path, 24)
    engine = AsyncEngine(EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256)))
    params = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
    batches = []
    try:
        async for outputs in engine.generate_batches("r", PROMPT, params):
            batches.append(outputs)
            if len(batches) == 1:
                await asyncio.sleep(0.5)  # the engine runs on; the next batch holds what it made
    finally:
        engine.close()
    outputs = [o for batch in batches for o in batch]
    assert [o.token.token_id for o in outputs] == expected
    assert [o.index for o in outputs] == list(range(24))
    assert len(batches[1]) > 1 and len(batches) < 24
    assert [o.finish_reason is not None for o in outputs] == [False] * 23 + [True]


async def test_a_prompt_too_long_is_raised_to_the_caller(tiny_model):
    from shared.step_output import InvalidRequestError

    engine = AsyncEngine(
        EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=32))
    )
    try:
        stream = engine.generate_batches("r", list(range(1, 40)), SamplingParams(max_tokens=4))
        with pytest.raises(InvalidRequestError, match="context"):
            await anext(stream)
    finally:
        engine.close()

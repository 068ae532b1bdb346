"""AsyncEngine: a real edge engine in its thread, its tokens streamed to asyncio."""

import asyncio
import dataclasses
import threading
import time

import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from shared.async_engine import AsyncEngine
from shared.engine import Engine, EngineRequest
from shared.node_http import NodeStatsCollector
from shared.proto_convert import stats_to_proto
from shared.sampling import SamplingParams

PROMPT = [1, 2, 3, 4]


def _engine_tokens(model_path, max_tokens: int) -> list[int]:
    engine = EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256))
    engine.add(
        EngineRequest("x", PROMPT, SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True))
    )
    tokens = []
    while engine.has_work():
        tokens += [o.token.token_id for o in engine.step().outputs]
    return tokens


async def test_a_lagging_consumer_gets_the_ready_tokens_together_none_lost(tiny_model):
    model_path = tiny_model(GGMLType.Q8_0)
    expected = _engine_tokens(model_path, 24)
    engine = AsyncEngine(EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256)))
    params = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
    batches = []
    try:
        async for outputs in engine.generate_batches(EngineRequest("r", PROMPT, params)):
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
    from shared.engine import InvalidRequestError

    engine = AsyncEngine(
        EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=32))
    )
    try:
        stream = engine.generate_batches(EngineRequest("r", range(1, 40), SamplingParams(max_tokens=4)))
        with pytest.raises(InvalidRequestError, match="context"):
            await anext(stream)
    finally:
        engine.close()


def _four_slot_engine(kind: str, tiny_model):
    if kind == "edge":
        return EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=4, context_size=512))
    from cloud.engine.llm_engine import LLMEngine

    return LLMEngine(str(tiny_model(GGMLType.F32)), num_blocks=64, block_size=4, max_num_seqs=4)


@pytest.mark.parametrize("kind", ["edge", "cloud"])
async def test_stats_are_immutable_snapshots_read_safely_while_the_engine_steps(kind, tiny_model):
    """Readers on other threads (the gRPC Stats call, a /metrics scrape) only ever see a whole,
    frozen NodeStats that the engine thread swapped in; they never iterate the engine's dicts."""
    engine = AsyncEngine(_four_slot_engine(kind, tiny_model))
    assert isinstance(engine.engine, Engine)  # the one contract (shared/engine.py)
    collector = NodeStatsCollector(engine, "node-test")
    stop, seen, errors = threading.Event(), [], []

    def hammer() -> None:
        while not stop.is_set():
            try:
                stats = engine.stats
                stats_to_proto(stats, node_id="node-test")
                list(collector.collect())
                seen.append((stats.num_running, stats.num_waiting, stats.requests_total))
                time.sleep(0.0002)  # leave the engine thread the GIL most of the time
            except Exception as error:
                errors.append(error)

    reader = threading.Thread(target=hammer)
    reader.start()
    params = SamplingParams(temperature=0, max_tokens=16, ignore_eos=True)

    async def one(index: int) -> int:
        request = EngineRequest(f"r{index}", [1 + index, 2, 3, 4], params)
        return sum([len(batch) async for batch in engine.generate_batches(request)])

    try:
        counts = await asyncio.gather(*(one(i) for i in range(8)))
    finally:
        stop.set()
        reader.join()
        engine.close()
    assert errors == [] and counts == [16] * 8
    assert max(running for running, _, _ in seen) == 4 and max(waiting for _, waiting, _ in seen) > 0
    assert all(running <= 4 for running, _, _ in seen)
    final = engine.stats
    assert (final.num_running, final.num_waiting, final.requests_total) == (0, 0, 8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        final.num_running = 1


def test_the_warmup_runs_on_the_engine_thread_where_the_steps_run(tiny_model):
    """Its OpenMP team is then the one the steps use; the stats published after it carry what it
    measured (the edge's decode and prefill rates)."""
    edge = EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=2, context_size=128))
    threads = []

    def warmup() -> None:
        threads.append(threading.current_thread().name)
        edge.measure_prefill(edge.warmup())

    engine = AsyncEngine(edge, prepare=warmup)
    try:
        assert threads == ["engine-loop"]
        assert engine.stats.decode_tokens_per_s > 0 and engine.stats.prefill_tokens_per_s > 0
    finally:
        engine.close()


def test_a_failed_warmup_is_raised_to_the_caller(tiny_model):
    edge = EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=128))

    def warmup() -> None:
        raise RuntimeError("no kernels")

    with pytest.raises(RuntimeError, match="no kernels"):
        AsyncEngine(edge, prepare=warmup)


def test_a_request_whose_event_loop_closed_is_aborted_and_the_engine_runs_on(tiny_model):
    """A server stopped mid-request closes its loop before the engine: the engine thread has no
    one to hand the tokens to, so it aborts the request (it raised and died before)."""
    edge = EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=4096))
    engine = AsyncEngine(edge)
    params = SamplingParams(temperature=0, max_tokens=4000, ignore_eos=True)
    loop = asyncio.new_event_loop()

    async def first_batch() -> None:
        await anext(engine.generate_batches(EngineRequest("cut", PROMPT, params)))

    try:
        loop.run_until_complete(first_batch())
        loop.close()  # the request still runs: its next tokens have nowhere to go
        deadline = time.monotonic() + 30
        while engine.stats.num_running and time.monotonic() < deadline:
            time.sleep(0.02)
        assert engine.stats.num_running == 0 and edge.num_generated_tokens < 4000
        assert engine._thread.is_alive()
        assert asyncio.run(_tokens(engine, 3)) == _engine_tokens(tiny_model(GGMLType.Q8_0), 3)
    finally:
        engine.close()


async def _tokens(engine: AsyncEngine, max_tokens: int) -> list[int]:
    params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
    batches = engine.generate_batches(EngineRequest("after", PROMPT, params))
    return [o.token.token_id async for batch in batches for o in batch]

"""Slots, batching, chunked prefill, stopping and errors of the edge engine, on a tiny model."""

import os

import numpy as np
import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest, FinishReason, InvalidRequestError
from shared.sampling import SamplingParams
from shared.step_rates import MIN_PREFILL_TOKENS, StepRates

GREEDY = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True)


@pytest.fixture
def engine(tiny_model) -> EdgeEngine:
    return EdgeEngine(
        EngineConfig(
            str(tiny_model(GGMLType.Q8_0)),
            num_slots=2,
            context_size=128,
            prefill_chunk=8,
            max_batch_tokens=16,
        )
    )


def _run(engine: EdgeEngine) -> tuple[dict[str, list[int]], list[list[str]]]:
    tokens: dict[str, list[int]] = {}
    steps = []
    while engine.has_work():
        outputs = engine.step().outputs
        steps.append([o.request_id for o in outputs])
        for output in outputs:
            tokens.setdefault(output.request_id, []).append(output.token.token_id)
    return tokens, steps


def test_requests_wait_for_a_free_slot(engine):
    for name in "abc":
        engine.add(EngineRequest(name, [1, 2, 3], GREEDY))
    first = engine.step().outputs
    assert [o.request_id for o in first] == ["a", "b"]
    assert sorted(engine.running) == ["a", "b"] and [s.request_id for s in engine.waiting] == ["c"]
    tokens, _ = _run(engine)
    for output in first:
        tokens[output.request_id].insert(0, output.token.token_id)
    assert {name: len(ids) for name, ids in tokens.items()} == {"a": 8, "b": 8, "c": 8}
    assert tokens["a"] == tokens["b"] == tokens["c"]  # same prompt, same greedy tokens
    assert list(engine.free_slots) != [] and len(engine.free_slots) == 2


def test_long_prompt_is_prefilled_in_chunks_while_others_decode(engine):
    engine.add(EngineRequest("short", [5, 6], SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)))
    engine.step()  # prefill "short" and sample its first token
    engine.add(EngineRequest("long", list(range(10, 50)), GREEDY))  # 40 tokens: 5 chunks of 8
    _, steps = _run(engine)
    # "short" gets a token every step while "long" is still being prefilled (no stall)...
    assert steps[:5] == [["short"], ["short"], ["short"], ["short"], ["short", "long"]]
    # ...and the chunking does not change what "long" generates.
    alone = EdgeEngine(
        EngineConfig(
            engine.config.model_path, num_slots=1, context_size=64, prefill_chunk=8, max_batch_tokens=16
        )
    )
    alone.add(EngineRequest("long", list(range(10, 50)), GREEDY))
    assert _run(alone)[0]["long"] == _run_one(engine, "again", list(range(10, 50)))


def _run_one(engine, request_id, prompt):
    engine.add(EngineRequest(request_id, prompt, GREEDY))
    return _run(engine)[0][request_id]


def test_batched_decoding_equals_decoding_alone(engine):
    prompts = {"x": [1, 2, 3, 4], "y": [9, 8, 7]}
    alone = {name: _run_one(engine, name, prompt) for name, prompt in prompts.items()}
    for name, prompt in prompts.items():
        engine.add(EngineRequest(name + "2", prompt, GREEDY))
    together, _ = _run(engine)
    assert together == {"x2": alone["x"], "y2": alone["y"]}


def test_stop_tokens_and_lengths(engine):
    first = _run_one(engine, "probe", [1, 2, 3])
    engine.add(
        EngineRequest(
            "stop", [1, 2, 3], SamplingParams(temperature=0, max_tokens=8, stop_token_ids=(first[2],))
        )
    )
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    assert [o.token.token_id for o in outputs] == first[:3]
    assert outputs[-1].finish_reason == FinishReason.STOP and outputs[-2].finish_reason is None
    engine.add(EngineRequest("len", [1, 2, 3], SamplingParams(temperature=0, max_tokens=2, ignore_eos=True)))
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    assert [o.finish_reason for o in outputs] == [None, FinishReason.LENGTH]


def test_generation_stops_at_the_end_of_the_context(tiny_model):
    engine = EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=16))
    engine.add(
        EngineRequest("r", list(range(1, 11)), SamplingParams(temperature=0, max_tokens=100, ignore_eos=True))
    )
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    assert len(outputs) == 6 and outputs[-1].finish_reason == FinishReason.LENGTH  # 10 + 6 = 16


def test_abort_frees_the_slot_at_once(engine):
    engine.add(EngineRequest("a", [1, 2], GREEDY))
    engine.add(EngineRequest("b", [1, 2], GREEDY))
    engine.add(EngineRequest("c", [1, 2], GREEDY))
    engine.step()
    assert engine.abort("a") and not engine.abort("a")
    assert engine.abort("c")  # still waiting
    engine.step()
    assert sorted(engine.running) == ["b"] and len(engine.free_slots) == 1


def test_bad_requests_are_refused(engine):
    with pytest.raises(InvalidRequestError, match="does not fit the context window of 64"):
        engine.add(EngineRequest("big", [1] * 64, GREEDY))
    with pytest.raises(InvalidRequestError, match="empty"):
        engine.add(EngineRequest("empty", [], GREEDY))
    with pytest.raises(InvalidRequestError, match=r"\[0, 320\)"):
        engine.add(EngineRequest("oob", [320], GREEDY))
    engine.add(EngineRequest("dup", [1], GREEDY))
    with pytest.raises(InvalidRequestError, match="already in use"):
        engine.add(EngineRequest("dup", [1], GREEDY))


def test_seeded_sampling_is_reproducible(engine):
    params = SamplingParams(temperature=1.0, seed=42, max_tokens=8, ignore_eos=True)
    engine.add(EngineRequest("s1", [3, 4, 5], params))
    first = _run(engine)[0]["s1"]
    engine.add(
        EngineRequest(
            "s2", [3, 4, 5], SamplingParams(temperature=1.0, seed=42, max_tokens=8, ignore_eos=True)
        )
    )
    assert _run(engine)[0]["s2"] == first
    assert np.unique(first).size > 1


def test_warmup_measures_a_decode_rate_and_leaves_the_slots_free(engine):
    """The node's first Stats must carry a measured decode rate (the router would otherwise guess
    one), and the warmup forwards must not leave anything running or cached as a sequence."""
    assert engine.stats().decode_tokens_per_s == 0.0
    engine.warmup().join()
    stats = engine.stats()
    assert stats.decode_tokens_per_s > 0.0
    assert (stats.num_running, stats.num_waiting, stats.requests_total) == (0, 0, 0)
    assert len(engine.free_slots) == 2


def test_the_prefill_rate_is_measured_on_a_whole_chunk(engine, monkeypatch):
    """The first Stats' prefill rate comes from one prompt chunk as a loaded node computes it
    (at least 2 * MIN_PREFILL_TOKENS, within a slot): 32 tokens had measured the fixed cost."""
    recorded = []
    record = StepRates.record_step

    def spy(rates, seconds, num_prefill, num_decode):
        recorded.append((num_prefill, num_decode))
        record(rates, seconds, num_prefill, num_decode)

    monkeypatch.setattr(StepRates, "record_step", spy)
    engine.measure_prefill(engine.warmup())
    chunk = min(max(2 * MIN_PREFILL_TOKENS, engine.config.prefill_chunk), engine.slot_context)
    assert recorded == [(chunk, 0)] and engine.stats().prefill_tokens_per_s > 0
    engine.config.prefill_chunk = 48
    engine.measure_prefill(engine.warmup())
    assert recorded[-1] == (48, 0)


def _thread_ids() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def test_a_prefill_starts_no_threads_beyond_the_tile_pool(tiny_model):
    """The tile threads run only serial kernels: a numba parallel kernel called from one of them
    made it the master of its own OpenMP team, and with more OpenMP threads than cores libgomp
    sleeps instead of spinning, which slowed every later decode step by half."""
    engine = EdgeEngine(
        EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=128, prefill_chunk=64)
    )
    engine.warmup().join()  # decode forwards: the decode team's threads exist from here on
    before = _thread_ids()
    engine.add(EngineRequest("long", list(range(3, 67)), GREEDY))  # one 64-token chunk: the tiles
    _run(engine)
    started = _thread_ids() - before
    assert 0 < len(started) <= engine.config.num_threads


def test_the_engine_threads_bound_its_kernels_on_any_calling_thread(tiny_model):
    """numba's thread count is per calling thread and starts at every core: an engine told one
    thread runs its step, from a new thread, with one numba thread (beside another engine on the
    other core, two would take that core)."""
    import threading

    import numba

    config = EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=64, num_threads=1)
    engine = EdgeEngine(config)
    engine.add(EngineRequest("a", [1, 2, 3], GREEDY))
    seen: list[tuple[int, int]] = []

    def step_on_a_new_thread() -> None:
        before = numba.get_num_threads()
        engine.step()
        seen.append((before, numba.get_num_threads()))

    thread = threading.Thread(target=step_on_a_new_thread)
    thread.start()
    thread.join()
    assert seen == [(numba.config.NUMBA_NUM_THREADS, 1)]

"""The cloud engine end to end: greedy equals transformers (float32); a request's output does not
depend on its batch, preemption or prefix-cache hits; the offline API behaves like vLLM's."""

import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers

from cloud import LLM, SamplingParams
from cloud.engine import llm_engine
from cloud.engine.llm_engine import LLMEngine
from formats.convert_hf import convert_hf_to_gguf
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest, InvalidRequestError
from tests.fixtures.hf_checkpoints import write_hf_checkpoint

GREEDY = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
LLAMACPP = json.loads((Path(__file__).parents[1] / "edge" / "llamacpp_greedy.json").read_text())


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    """A tiny random Llama written by transformers, and its GGUF conversion."""
    directory = tmp_path_factory.mktemp("tiny-hf")
    model, _ = write_hf_checkpoint(directory, "llama", weight_scale=4.0)
    gguf_path = directory / "model.f32.gguf"
    convert_hf_to_gguf(directory, gguf_path, GGMLType.F32, progress=False)
    return model, directory, gguf_path


def _hf_greedy(model, prompt_ids: list[int], num_tokens: int) -> list[int]:
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt_ids]),
            max_new_tokens=num_tokens,
            do_sample=False,
            min_new_tokens=num_tokens,
            pad_token_id=0,
        )
    return out[0, len(prompt_ids) :].tolist()


PROMPTS = [
    [5, 17, 200, 33],
    [91, 250, 7, 8, 9, 10, 11, 12, 13],
    [300, 2, 301, 44, 45, 46, 47, 48, 49, 50, 51],
]


@pytest.mark.parametrize("source", ["gguf", "safetensors"])
def test_tiny_greedy_equals_transformers(tiny_checkpoint, source):
    model, directory, gguf_path = tiny_checkpoint
    source_path = str(gguf_path if source == "gguf" else directory)
    llm = LLM(source_path, dtype="float32", num_blocks=64, block_size=4)  # transformers' dtype
    outputs = llm.generate(PROMPTS, GREEDY)
    for prompt, output in zip(PROMPTS, outputs, strict=True):
        assert output.token_ids == _hf_greedy(model, prompt, 24)
        assert output.finish_reason == "length"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_output_is_independent_of_batch_preemption_and_prefix_hits(tiny_checkpoint, dtype):
    _, _, gguf_path = tiny_checkpoint
    rng = np.random.default_rng(0)
    shared = rng.integers(0, 320, 12).tolist()
    prompts = [
        (shared if i % 3 == 0 else []) + rng.integers(0, 320, int(rng.integers(3, 40))).tolist()
        for i in range(32)
    ]
    lengths = [int(n) for n in rng.integers(4, 30, 32)]
    params = [SamplingParams(temperature=0, max_tokens=n, ignore_eos=True) for n in lengths]
    alone = LLM(str(gguf_path), dtype=dtype, num_blocks=64, block_size=4)
    expected = [alone.generate([p], [sp])[0].token_ids for p, sp in zip(prompts, params, strict=True)]
    # 32 requests at once, few blocks (forces preemption), prefix caching on (shared prompts hit)
    batched = LLM(str(gguf_path), dtype=dtype, num_blocks=60, block_size=4, max_num_batched_tokens=64)
    outputs = batched.generate(prompts, params)
    assert [o.token_ids for o in outputs] == expected
    assert batched.engine.scheduler.num_preemptions > 0
    assert batched.engine.block_manager.num_prefix_hits > 0
    assert sum(o.num_cached_tokens for o in outputs) > 0
    # and without prefix caching
    plain = LLM(str(gguf_path), dtype=dtype, num_blocks=200, block_size=4, enable_prefix_caching=False)
    assert [o.token_ids for o in plain.generate(prompts, params)] == expected


def test_engine_abort_frees_blocks(tiny_checkpoint):
    _, _, gguf_path = tiny_checkpoint
    engine = LLMEngine(str(gguf_path), num_blocks=32, block_size=4)
    engine.add(EngineRequest("a", [1, 2, 3, 4, 5], GREEDY))
    engine.step()
    assert engine.block_manager.num_free_blocks < 32
    assert engine.abort("a") and not engine.has_work() and not engine.abort("a")
    assert engine.block_manager.num_free_blocks == 32
    assert engine.stats().requests_total == 1  # an aborted request is finished too
    with pytest.raises(InvalidRequestError, match="does not fit"):
        engine.add(EngineRequest("b", [1] * 256, GREEDY))


def test_each_step_runs_torch_and_numba_on_the_engines_thread_count(tiny_checkpoint):
    """Both count per calling thread in one OpenMP runtime, and numba starting its pool on a
    thread sets that thread's count, which torch reads, to every core: a step on a new thread
    (as the serving loop's) still runs both on the count the engine is given for that step."""
    import threading

    import numba

    _, _, gguf_path = tiny_checkpoint
    all_threads = numba.config.NUMBA_NUM_THREADS
    counts = iter([1, all_threads, 1])
    engine = LLMEngine(str(gguf_path), num_blocks=32, block_size=4, num_threads=lambda: next(counts))
    engine.add(EngineRequest("a", [1, 2, 3, 4, 5], GREEDY))
    seen: list[tuple[int, int]] = []

    def steps_on_a_new_thread() -> None:
        numba.get_num_threads()  # starts numba's pool from this thread
        seen.append((torch.get_num_threads(), numba.get_num_threads()))
        for _ in range(3):
            engine.step()
            seen.append((torch.get_num_threads(), numba.get_num_threads()))

    thread = threading.Thread(target=steps_on_a_new_thread)
    thread.start()
    thread.join()
    assert seen == [(all_threads, all_threads), (1, 1), (all_threads, all_threads), (1, 1)]


@pytest.mark.demo_model
@pytest.mark.slow  # transformers reads the GGUF file in Python: ~25 s
def test_demo_greedy_equals_transformers_and_text_decodes(demo_model_path):
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        demo_model_path.parent, gguf_file=demo_model_path.name, torch_dtype=torch.float32
    ).eval()
    llm = LLM(str(demo_model_path), kv_cache_gib=0.1)
    case = LLAMACPP["cases"][1]
    output = llm.generate(case["prompt_ids"], SamplingParams(temperature=0, max_tokens=16))[0]
    assert output.token_ids == _hf_greedy(reference, case["prompt_ids"], 16)
    text = llm.generate("The capital of France is", SamplingParams(temperature=0, max_tokens=3))[0].text
    assert "Paris" in text


def test_n_samples_fork_the_prompt_blocks(tiny_checkpoint):
    _, _, gguf_path = tiny_checkpoint
    llm = LLM(str(gguf_path), num_blocks=64, block_size=4)
    prompt = [5, 17, 200, 33, 91, 250]  # 6 tokens: the second block is partly filled, so it is copied
    single = llm.generate([prompt], GREEDY)[0]
    forked = llm.generate([prompt], SamplingParams(temperature=0, max_tokens=24, ignore_eos=True, n=3))[0]
    assert [o.token_ids for o in forked.outputs] == [single.token_ids] * 3
    assert llm.engine.block_manager.num_copy_on_write == 2
    sampled = llm.generate(
        [prompt], SamplingParams(temperature=1.0, seed=1, max_tokens=24, ignore_eos=True, n=3)
    )[0]
    assert len({tuple(o.token_ids) for o in sampled.outputs}) == 3
    assert llm.engine.block_manager.num_free_blocks == 64


def test_warmup_measures_prefill_and_decode_and_leaves_no_trace(tiny_checkpoint):
    _, _, gguf_path = tiny_checkpoint
    engine = LLMEngine(str(gguf_path), num_blocks=64, block_size=4)
    engine.add(EngineRequest("a", [1, 2, 3, 4, 5], replace(GREEDY, max_tokens=1)))
    engine.step()  # one finished request (a prefill of 5 tokens measures no rate)
    stats_before = engine.stats()
    assert (stats_before.prefill_tokens_per_s, stats_before.decode_tokens_per_s) == (0.0, 0.0)
    engine.warmup()
    stats = engine.stats()
    assert stats.prefill_tokens_per_s > 0 and stats.decode_tokens_per_s > 0
    assert (stats.requests_total, stats.tokens_generated_total) == (1, 1)  # as they were
    assert not engine.has_work()
    assert engine.block_manager.num_free_blocks == 64  # its blocks went back (cached, but free)
    engine.add(EngineRequest("b", [1, 2, 3, 4, 5], GREEDY))
    while engine.has_work():
        engine.step()
    assert engine.stats().requests_total == 2


def test_the_warmup_batch_fills_a_step_and_sets_the_prefill_rate(tiny_checkpoint, monkeypatch):
    """The batch's prompts fill one step's token budget (a burst's steps), and that step's rate
    is the one reported, not smoothed into the single short prompt's."""
    _, _, gguf_path = tiny_checkpoint
    engine = LLMEngine(
        str(gguf_path), num_blocks=256, block_size=4, max_num_seqs=4, max_num_batched_tokens=64
    )
    batches, rates = [], []
    warmup_batch = engine._warmup_batch

    def spy(batch_size, prompt_tokens, first_token=0):
        rates.append(engine.rates.prefill_tokens_per_s)
        batches.append((batch_size, prompt_tokens, first_token))
        warmup_batch(batch_size, prompt_tokens, first_token)

    monkeypatch.setattr(engine, "_warmup_batch", spy)
    engine.warmup()
    single = llm_engine.WARMUP_PROMPT_TOKENS
    untimed_first_token = engine.model_config.vocab_size // 2
    assert batches == [(1, single, untimed_first_token), (1, single, 0), (4, 64 // 4, 0)]
    assert rates == [0.0, 0.0, 0.0]  # neither the untimed pass's nor the single prompt's rate is kept
    assert engine.stats().prefill_tokens_per_s > 0


def test_the_warmup_reports_no_step_of_its_untimed_first_request(tiny_checkpoint, monkeypatch):
    """The first request's steps load or compile the kernels: from a cold cache the cloud had
    reported seconds per decode step. Here every step of that request takes 0.3 s longer; no
    reported step time or rate includes it."""
    _, _, gguf_path = tiny_checkpoint
    engine = LLMEngine(str(gguf_path), num_blocks=256, block_size=4, max_num_seqs=4)
    execute_model, warmup_batch, slow = engine.runner.execute_model, engine._warmup_batch, []

    def first_calls_slow(*args):
        if slow:
            time.sleep(0.3)
        return execute_model(*args)

    def untimed_pass_slow(batch_size, prompt_tokens, first_token=0):
        slow[:] = [True] if first_token else []
        warmup_batch(batch_size, prompt_tokens, first_token)
        slow.clear()

    monkeypatch.setattr(engine.runner, "execute_model", first_calls_slow)
    monkeypatch.setattr(engine, "_warmup_batch", untimed_pass_slow)
    engine.warmup()
    stats = engine.stats()
    assert [batch for batch, _ in stats.decode_steps] == [1, 4]
    assert all(seconds < 0.3 for _, seconds in stats.decode_steps), stats.decode_steps


def test_the_context_is_no_longer_than_the_kv_cache(tiny_checkpoint):
    """A request that outgrew the cache would preempt itself forever; it ends at the cache's size."""
    _, _, gguf_path = tiny_checkpoint
    engine = LLMEngine(str(gguf_path), num_blocks=8, block_size=4)
    assert engine.max_model_len == 32
    engine.add(EngineRequest("long", [1, 2, 3], replace(GREEDY, max_tokens=100)))
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    assert len(outputs) == 29 and outputs[-1].finish_reason == "length"


def test_the_offline_api_takes_vllms_engine_arguments(tiny_checkpoint):
    from cloud.engine.engine_args import cpu_has_bfloat16, free_memory_bytes

    _, _, gguf_path = tiny_checkpoint
    bf16 = LLM(str(gguf_path), dtype="bfloat16", num_blocks=64, block_size=4, enforce_eager=True)
    assert bf16.engine.runner.kv_caches[0][0].dtype == torch.bfloat16
    assert LLM(str(gguf_path), dtype=torch.float32, num_blocks=8).engine.runner.kv_caches[0][0].dtype == (
        torch.float32
    )
    auto = torch.bfloat16 if cpu_has_bfloat16() else torch.float32  # this CPU's flags decide
    assert LLM(str(gguf_path), num_blocks=8).engine.runner.kv_caches[0][0].dtype == auto
    for bad, message in (
        ({"dtype": "float8"}, "dtype 'float8' is not supported"),
        ({"dtype": torch.int8}, "is not supported"),
        ({"tensor_parallel_size": 2}, "unknown argument"),
        ({"gpu_memory_utilization": 1.5}, r"gpu_memory_utilization must be in \(0, 1\]"),
        ({"seed": "7"}, "seed must be an integer"),
    ):
        with pytest.raises(ValueError, match=message):
            LLM(str(gguf_path), num_blocks=8, **bad)
    share = LLM(str(gguf_path), dtype="float32", gpu_memory_utilization=0.001, block_size=4)  # of free memory
    config = share.engine.model_config
    bytes_per_block = 2 * config.num_layers * 4 * config.kv_dim * 4
    expected = 0.001 * free_memory_bytes(torch.device("cpu")) / bytes_per_block
    assert share.engine.cache_config.num_blocks == pytest.approx(expected, rel=0.1)


def test_a_seeded_llm_repeats_its_sampled_outputs(tiny_checkpoint):
    _, _, gguf_path = tiny_checkpoint
    sampled = SamplingParams(temperature=1.0, max_tokens=16, ignore_eos=True)

    def run(seed):
        llm = LLM(str(gguf_path), num_blocks=64, block_size=4, seed=seed)
        return [o.token_ids for o in llm.generate(PROMPTS, sampled)]

    first = run(7)
    assert run(7) == first and run(8) != first
    assert len({tuple(ids) for ids in first}) == len(PROMPTS)  # each request its own derived seed


def test_auto_dtype_follows_the_cpus_bfloat16_instructions(tmp_path):
    from cloud.engine.engine_args import cpu_has_bfloat16

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    assert cpu_has_bfloat16(cpuinfo)
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512bw\n")  # no bfloat16
    assert not cpu_has_bfloat16(cpuinfo)
    assert not cpu_has_bfloat16(tmp_path / "absent")  # not Linux: float32, which runs anywhere

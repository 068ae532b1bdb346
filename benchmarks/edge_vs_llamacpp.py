"""Edge engine vs llama.cpp on the same GGUF file and the same thread count, in one run.

    bash benchmarks/setup_llamacpp.sh          # once: builds llama-cpp-python into .venv (~8 min)
    .venv/bin/python benchmarks/edge_vs_llamacpp.py [--model FILE] [--threads N]

Ours runs on both edge backends (numba kernels, onnxruntime MatMulNBits). Each engine runs in
its own fresh process (so start time and peak RSS are its own): prompt
processing of a 512-token prompt (pp512), generation of 128 tokens (tg128), start to first token
(imports + load + first token of a short prompt, warm page cache) and peak RSS. The engines take
turns for --rounds rounds (a shared VM's speed drifts over minutes); each figure is the median
over an engine's rounds, each round the best of 2 runs. A backend that refuses the file's types
is skipped, with its reason in the table. Prints a table with ratios (ours / llama.cpp) and
writes benchmarks/results/edge_vs_llamacpp-<file name>.json.
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from shared.engine import EngineRequest

PROMPT_TOKENS = 512
GENERATED_TOKENS = 128
CONTEXT = 1024
REPEATS = 2  # pp512 and tg128 are each the best of this many runs within a worker
ROUNDS = 3  # every engine runs once per round, rounds interleaved (a shared VM's speed drifts)
RESULTS = Path(__file__).parent / "results"
ENGINES = ("ours", "ours-onnx", "llamacpp")
METRICS = ("pp512_tokens_per_s", "tg128_tokens_per_s", "first_token_s", "peak_rss_mib")


def prompt_ids(vocab_size: int) -> list[int]:
    """A fixed pseudo-random prompt (deterministic, seed 0), avoiding the first 100 ids."""
    state, ids = 0, []
    for _ in range(PROMPT_TOKENS):
        state = (state * 1103515245 + 12345) % (1 << 31)
        ids.append(100 + state % (vocab_size - 100))
    return ids


def best_of(measure, repeats: int = REPEATS) -> float:
    """The best of several runs: a shared VM's noise only ever slows a run down."""
    return max(measure() for _ in range(repeats))


def _result(pp: float, tg: float, first_token: float) -> dict:
    return {
        "pp512_tokens_per_s": pp,
        "tg128_tokens_per_s": tg,
        "first_token_s": first_token,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_ours(model: str, threads: int, backend: str = "numba") -> dict:
    started = time.perf_counter()
    import numpy as np

    from edge.engine import EdgeEngine, EngineConfig
    from shared.sampling import SamplingParams

    engine = EdgeEngine(
        EngineConfig(
            model,
            num_slots=1,
            context_size=CONTEXT,
            num_threads=threads,
            prefill_chunk=PROMPT_TOKENS,
            max_batch_tokens=PROMPT_TOKENS,
            backend=backend,
        )
    )
    engine.warmup()
    greedy = SamplingParams(temperature=0, max_tokens=1, ignore_eos=True)
    engine.add(EngineRequest("first", [1, 2, 3, 4], greedy))
    engine.step()
    first_token = time.perf_counter() - started
    ids = prompt_ids(engine.model_config.vocab_size)
    as_int = lambda v: np.asarray(v, dtype=np.int32)  # noqa: E731

    def prompt_processing() -> float:
        t0 = time.perf_counter()
        positions = as_int(range(len(ids)))
        engine.model.forward(
            as_int(ids), as_int([0] * len(ids)), positions, np.array([len(ids) - 1]), engine.cache
        )
        return PROMPT_TOKENS / (time.perf_counter() - t0)

    def generation() -> float:
        params = SamplingParams(temperature=0, max_tokens=GENERATED_TOKENS + 1, ignore_eos=True)
        engine.add(EngineRequest("tg", ids[:8], params))
        engine.step()  # prompt + first token
        t0 = time.perf_counter()
        while engine.has_work():
            engine.step()
        return GENERATED_TOKENS / (time.perf_counter() - t0)

    return _result(best_of(prompt_processing), best_of(generation), first_token)


def run_llamacpp(model: str, threads: int) -> dict:
    started = time.perf_counter()
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=model,
        n_ctx=CONTEXT,
        n_batch=PROMPT_TOKENS,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    llm.eval([1, 2, 3, 4])
    first_token = time.perf_counter() - started
    ids = prompt_ids(llm.n_vocab())

    def prompt_processing() -> float:
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(ids)
        return PROMPT_TOKENS / (time.perf_counter() - t0)

    def generation() -> float:
        llm.reset()
        llm.eval(ids[:8])
        token = int(llm.scores[llm.n_tokens - 1].argmax())
        t0 = time.perf_counter()
        for _ in range(GENERATED_TOKENS):
            llm.eval([token])
            token = int(llm.scores[llm.n_tokens - 1].argmax())
        return GENERATED_TOKENS / (time.perf_counter() - t0)

    return {
        **_result(best_of(prompt_processing), best_of(generation), first_token),
        "version": llama_cpp.__version__,
    }


def median(results: list[dict]) -> dict:
    """One engine's figures over its rounds: the median of each (or why it was skipped)."""
    if "skipped" in results[0]:
        return results[0]
    combined = {**results[0], "rounds": results}
    for key in METRICS:
        combined[key] = statistics.median(r[key] for r in results)
    return combined


def worker(name: str, model: str, threads: int) -> dict:
    command = [sys.executable, __file__, "--worker", name, "--model", model, "--threads", str(threads)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{name} worker failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_worker(name: str, model: str, threads: int) -> dict:
    """In the worker process: one engine's figures, or {"skipped": why} if it refuses the file."""
    from formats.errors import UnsupportedModelError

    if name == "llamacpp":
        return run_llamacpp(model, threads)
    try:
        return run_ours(model, threads, "onnxruntime" if name == "ours-onnx" else "numba")
    except UnsupportedModelError as error:
        return {"skipped": str(error)}


def print_table(model: str, threads: int, figures: dict[str, dict]) -> None:
    reference = figures["llamacpp"]
    print(f"model {Path(model).name}, {threads} threads, llama-cpp-python {reference['version']}")
    for name in ("ours", "ours-onnx"):
        if "skipped" in figures[name]:
            print(f"{name}: skipped ({figures[name]['skipped']})")
    print(f"{'':30} {'edge (numba)':>13} {'edge (onnxrt)':>14} {'llama.cpp':>10} {'ratios':>14}")
    for key in METRICS:
        cells = [f"{figures[n][key]:.2f}" if key in figures[n] else "-" for n in ENGINES]
        ratios = " / ".join(
            f"{figures[n][key] / reference[key]:.2f}" if key in figures[n] else "-" for n in ENGINES[:2]
        )
        print(f"{key:30} {cells[0]:>13} {cells[1]:>14} {cells[2]:>10} {ratios:>14}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="GGUF file (default: the demo model)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is None:
        from formats.model_pull import DEFAULT_MODEL, pull

        args.model = str(pull(DEFAULT_MODEL))
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.model, args.threads)))
        return
    rounds = [{name: worker(name, args.model, args.threads) for name in ENGINES} for _ in range(args.rounds)]
    figures = {name: median([r[name] for r in rounds]) for name in ENGINES}
    print_table(args.model, args.threads, figures)
    reference = figures["llamacpp"]
    ratios = {
        name: {key: figures[name][key] / reference[key] for key in METRICS}
        for name in ENGINES[:2]
        if "skipped" not in figures[name]
    }
    results = RESULTS / f"edge_vs_llamacpp-{Path(args.model).stem}.json"
    results.parent.mkdir(exist_ok=True)
    machine = platform.processor() or platform.machine()
    summary = {"model": Path(args.model).name, "threads": args.threads, "machine": machine, "ratios": ratios}
    results.write_text(json.dumps({**summary, **figures}, indent=2))
    print(f"saved {results}")


if __name__ == "__main__":
    main()

"""Edge engine vs llama.cpp on the same GGUF file and the same thread count, in one run, at one
or both ISA levels (benchmarks/isa_targets.py).

    bash benchmarks/setup_llamacpp_isa.sh      # once: llama.cpp built native and AVX2-only (~30 min)
    .venv/bin/python benchmarks/edge_vs_llamacpp.py [--model FILE] [--threads N] [--isa both]

`--isa avx2` runs both sides as on an AVX2-only CPU (numba compiles for Zen 3; llama.cpp built
without AVX-512), `--isa native` as this host allows, `--isa both` (the default) both, side by
side in the same rounds. Ours runs on both edge backends (numba kernels, onnxruntime
MatMulNBits; onnxruntime picks its kernels from the host at run time, so it runs at the native
level only). Each engine runs in its own fresh process (so start time and peak RSS are its own):
prompt processing of a 512-token prompt (pp512), generation of 128 tokens (tg128), start to first
token (imports + load + first token of a short prompt, warm page cache) and peak RSS. The engines
take turns for --rounds rounds (a shared VM's speed drifts over minutes); each figure is the
median over an engine's rounds, each round the best of 2 runs. A backend that refuses the file's
types is skipped, with its reason in the table. Prints a table per level with the ISA each side
ran at in every row, and ratios (ours / llama.cpp), and writes
benchmarks/results/edge_vs_llamacpp-<file name>.json.
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

from isa_targets import LEVELS, llamacpp_isa, worker_environment  # beside this script

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

    kernels = getattr(engine, "kernels", {})
    isa = f"{kernels['isa']} ({kernels['decode']})" if "isa" in kernels else kernels.get("backend", "?")
    return {**_result(best_of(prompt_processing), best_of(generation), first_token), "isa": isa}


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
        "isa": llamacpp_isa(llama_cpp.llama_print_system_info().decode()),
    }


def median(results: list[dict]) -> dict:
    """One engine's figures over its rounds: the median of each (or why it was skipped)."""
    if "skipped" in results[0]:
        return results[0]
    combined = {**results[0], "rounds": results}
    for key in METRICS:
        combined[key] = statistics.median(r[key] for r in results)
    return combined


def worker(name: str, model: str, threads: int, level: str) -> dict:
    command = [sys.executable, __file__, "--worker", name, "--model", model, "--threads", str(threads)]
    environ = worker_environment(level, name)
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=environ)
    if result.returncode != 0:
        raise SystemExit(f"{name} worker ({level}) failed:\n{result.stderr}")
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


def print_table(model: str, threads: int, level: str, figures: dict[str, dict]) -> None:
    reference = figures["llamacpp"]
    names = [n for n in ENGINES[:2] if n in figures]
    print(
        f"model {Path(model).name}, {threads} threads, llama-cpp-python {reference['version']}, --isa {level}"
    )
    for name in names:
        if "skipped" in figures[name]:
            print(f"{name}: skipped ({figures[name]['skipped']})")
    isa = " / ".join(f"{n}: {figures[n].get('isa', '-')}" for n in (*names, "llamacpp"))
    print(f"{'':22} {'isa':>7} {'edge (numba)':>13} {'edge (onnxrt)':>14} {'llama.cpp':>10} {'ratios':>12}")
    for key in METRICS:
        cells = [f"{figures[n][key]:.2f}" if key in figures.get(n, {}) else "-" for n in ENGINES]
        ratios = " / ".join(
            f"{figures[n][key] / reference[key]:.2f}" if key in figures.get(n, {}) else "-"
            for n in ENGINES[:2]
        )
        print(f"{key:22} {level:>7} {cells[0]:>13} {cells[1]:>14} {cells[2]:>10} {ratios:>12}")
    print(f"ran at: {isa}")


def engines_at(level: str, with_onnx: bool) -> tuple[str, ...]:
    """onnxruntime chooses its kernels from the host when it runs: native only."""
    return tuple(n for n in ENGINES if n != "ours-onnx" or (with_onnx and level == "native"))


def measure(model: str, threads: int, levels: tuple[str, ...], rounds: int, with_onnx: bool) -> dict:
    """{level: {engine: median figures}}: every round runs every engine at every level in turn."""
    runs = [
        {
            level: {n: worker(n, model, threads, level) for n in engines_at(level, with_onnx)}
            for level in levels
        }
        for _ in range(rounds)
    ]
    return {
        level: {n: median([r[level][n] for r in runs]) for n in engines_at(level, with_onnx)}
        for level in levels
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="GGUF file (default: the demo model)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--isa", choices=(*LEVELS, "both"), default="both", help="ISA level of both sides")
    parser.add_argument("--no-onnx", action="store_true", help="leave the onnxruntime backend out")
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is None:
        from formats.model_pull import DEFAULT_MODEL, pull

        args.model = str(pull(DEFAULT_MODEL))
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.model, args.threads)))
        return
    levels = LEVELS if args.isa == "both" else (args.isa,)
    by_level = measure(args.model, args.threads, levels, args.rounds, not args.no_onnx)
    for level, figures in by_level.items():
        print_table(args.model, args.threads, level, figures)
    ratios = {
        level: {
            name: {key: figures[name][key] / figures["llamacpp"][key] for key in METRICS}
            for name in ENGINES[:2]
            if name in figures and "skipped" not in figures[name]
        }
        for level, figures in by_level.items()
    }
    results = RESULTS / f"edge_vs_llamacpp-{Path(args.model).stem}.json"
    results.parent.mkdir(exist_ok=True)
    machine = platform.processor() or platform.machine()
    summary = {"model": Path(args.model).name, "threads": args.threads, "machine": machine, "ratios": ratios}
    results.write_text(json.dumps({**summary, **by_level}, indent=2))
    print(f"saved {results}")


if __name__ == "__main__":
    main()

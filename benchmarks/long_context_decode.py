"""Generation speed deep into the context: the edge engine against llama.cpp.

    .venv/bin/python benchmarks/long_context_decode.py [--model FILE] [--contexts 500,3000]
        [--rounds 3] [--threads 2]

At each context length a seeded random prompt of that many tokens is computed, then 64 tokens
are decoded one forward at a time; past a few thousand tokens the attention over the KV cache
costs as much as the weights. Each engine runs in its own process (llama-cpp-python for
llama.cpp, `bash benchmarks/setup_llamacpp.sh`), rounds alternate the order, the table shows
medians and our ratio. Results go to benchmarks/results/long_context_decode.json.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "long_context_decode.json"
ENGINES = ("ours", "llamacpp")
DECODED = 64
CHUNK = 512


def prompt(length: int) -> list[int]:
    import numpy as np

    return [int(i) for i in np.random.default_rng(0).integers(100, 40_000, length)]


def ours(model: str, length: int, threads: int) -> float:
    import numpy as np

    from edge.engine import EdgeEngine, EngineConfig

    config = EngineConfig(
        model, num_slots=1, context_size=length + DECODED + 8, num_threads=threads, prefill_chunk=CHUNK
    )
    engine = EdgeEngine(config)
    engine.warmup()
    as_int = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    ids = prompt(length)
    for start in range(0, length, CHUNK):
        chunk = ids[start : start + CHUNK]
        positions = as_int(range(start, start + len(chunk)))
        engine.model.forward(as_int(chunk), as_int([0] * len(chunk)), positions, np.array([0]), engine.cache)
    started = time.perf_counter()
    for i in range(DECODED):
        engine.model.forward(as_int([5]), as_int([0]), as_int([length + i]), np.array([0]), engine.cache)
    return DECODED / (time.perf_counter() - started)


def llamacpp(model: str, length: int, threads: int) -> float:
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=model,
        n_ctx=length + DECODED + 8,
        n_batch=CHUNK,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    llm.eval(prompt(length))
    started = time.perf_counter()
    for _ in range(DECODED):
        llm.eval([5])
    return DECODED / (time.perf_counter() - started)


def worker(name: str, model: str, length: int, threads: int) -> float:
    command = [sys.executable, __file__, "--worker", name, "--model", model]
    command += ["--contexts", str(length), "--threads", str(threads)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{name} worker failed:\n{result.stderr[-3000:]}")
    return float(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="GGUF file (default: the demo model)")
    parser.add_argument("--contexts", default="500,3000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is None:
        from formats.model_pull import DEFAULT_MODEL, pull

        args.model = str(pull(DEFAULT_MODEL))
    contexts = [int(c) for c in args.contexts.split(",")]
    if args.worker:
        run = ours if args.worker == "ours" else llamacpp
        print(run(args.model, contexts[0], args.threads))
        return
    rounds = []
    for index in range(args.rounds):
        order = ENGINES if index % 2 == 0 else ENGINES[::-1]
        rounds.append({f"{n}@{c}": worker(n, args.model, c, args.threads) for c in contexts for n in order})
        print(f"round {index + 1}/{args.rounds} done", file=sys.stderr)
    medians = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    print(f"model {Path(args.model).name}, {args.threads} threads, {DECODED} tokens decoded, tokens/s")
    for length in contexts:
        mine, reference = medians[f"ours@{length}"], medians[f"llamacpp@{length}"]
        print(f"context {length:>6}: edge {mine:7.1f}  llama.cpp {reference:7.1f}  {mine / reference:.2f}x")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps({"model": Path(args.model).name, "medians": medians, "rounds": rounds}, indent=2)
    )
    print(f"saved {RESULTS}")


if __name__ == "__main__":
    main()

"""How fast the decode loops stream quantized weights, by prefetch distance.

    .venv/bin/python benchmarks/weight_stream.py [--distances 0,4096,8192,16384,32768]
        [--types Q4_1,Q5_0,Q8_0,Q4_K] [--threads 1,2] [--rounds 3]

A decode step reads every weight once, so its speed is how fast the integer loops
(edge/kernels/int8_dot.py, kquant_dot.py) stream weight rows that are not in any cache. Each
distance runs in its own process with its own numba cache, the loops compiled with
`vector_ir.PREFETCH_BYTES` set to it (0: no hints, the reference); rounds alternate the
distances. Per weight type and thread count: 40 weights of 4096 rows x 576 (more than the L2
caches together) through `matmul_q8_group` with one activation row, GB/s of weight bytes read,
best of 3 passes; the table shows medians over rounds and the ratio to distance 0. Results go to
benchmarks/results/weight_stream.json.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "weight_stream.json"
WEIGHTS, ROWS, WIDTH = 40, 4096, 576
WIDTH_K = 512  # the K-quants' rows hold whole super-blocks of 256


def stream_rate(type_name: str, threads: int) -> float:
    """In the worker: GB/s of weight bytes through matmul_q8_group, best of 3 passes."""
    import numba
    import numpy as np

    from edge.kernels.int8_matmul import matmul_q8_group
    from edge.kernels.weight_types import weight_types
    from formats import quants
    from formats.ggml_types import BLOCK_GEOMETRY, GGMLType

    numba.set_num_threads(threads)
    ggml_type = GGMLType[type_name]
    width = WIDTH_K if BLOCK_GEOMETRY[ggml_type].block_size == 256 else WIDTH
    rng = np.random.default_rng(0)
    template = quants.quantize((rng.standard_normal((ROWS, width)) * 0.05).astype(np.float32), ggml_type)
    weights = [np.ascontiguousarray(template).view(np.uint8).reshape(ROWS, -1).copy() for _ in range(WEIGHTS)]
    x = rng.standard_normal((1, width)).astype(np.float32)
    out = (np.empty((1, ROWS), np.float32),)
    kinds = weight_types(ggml_type)
    matmul_q8_group(kinds, (weights[0],), (int(ggml_type),), x, out, False)  # compile
    passes = []
    for _ in range(3):
        started = time.perf_counter()
        for weight in weights:
            matmul_q8_group(kinds, (weight,), (int(ggml_type),), x, out, False)
        passes.append(time.perf_counter() - started)
    return sum(w.nbytes for w in weights) / min(passes) / 1e9


def run_worker(distance: int, types: list[str], threads: list[int]) -> dict:
    from edge.kernels import vector_ir

    vector_ir.PREFETCH_BYTES = distance  # read when the loops are compiled, below
    return {f"{name}/{count}": stream_rate(name, count) for name in types for count in threads}


def worker(distance: int, types: list[str], threads: list[int]) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        command = [sys.executable, __file__, "--worker", str(distance)]
        command += ["--types", ",".join(types), "--threads", ",".join(map(str, threads))]
        environ = {**os.environ, "NUMBA_CACHE_DIR": cache}
        result = subprocess.run(command, capture_output=True, text=True, env=environ, check=False)
    if result.returncode != 0:
        raise SystemExit(f"worker for distance {distance} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def print_table(medians: dict[int, dict], columns: list[str]) -> None:
    print("GB/s of weights, medians (ratio to no prefetch)")
    print(f"{'distance':>10}  " + "  ".join(f"{c:>16}" for c in columns))
    for distance, rates in medians.items():
        cells = [f"{rates[c]:6.2f} ({rates[c] / medians[0][c]:4.2f}x)" for c in columns]
        print(f"{distance:>10}  " + "  ".join(f"{c:>16}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--distances", default="0,4096,8192,16384,32768")
    parser.add_argument("--types", default="Q4_1,Q5_0,Q8_0,Q4_K")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    types, threads = args.types.split(","), [int(t) for t in args.threads.split(",")]
    if args.worker is not None:
        print(json.dumps(run_worker(args.worker, types, threads)))
        return
    distances = sorted({0, *(int(d) for d in args.distances.split(","))})
    rounds = []
    for index in range(args.rounds):
        order = distances if index % 2 == 0 else distances[::-1]
        rounds.append({d: worker(d, types, threads) for d in order})
        print(f"round {index + 1}/{args.rounds} done", file=sys.stderr)
    columns = list(rounds[0][0])
    medians = {d: {c: statistics.median(r[d][c] for r in rounds) for c in columns} for d in distances}
    print_table(medians, columns)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"medians": medians, "rounds": rounds}, indent=2))
    print(f"saved {RESULTS}")


if __name__ == "__main__":
    main()

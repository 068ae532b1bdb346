"""The decode roofline of a GGUF file on this host: bytes of weights one token reads, over the
memory bandwidth measured here, and how close each engine's tg128 comes to it.

    .venv/bin/python benchmarks/roofline.py FILE.gguf [...] [--threads 2]

Bandwidth: the best of 5 passes of `--threads` numba threads summing a 1 GiB array (more than any
cache), in GB/s. Bytes per token: every matrix a decode step multiplies (the layers' weights and
the output; with tied embeddings the token embedding is the output), each read once; the
embedding row, norms and the KV cache are left out. Where benchmarks/edge_vs_llamacpp.py saved a
result for the file, prints each engine's tg128 at each ISA level as a fraction of the roofline.
"""

import argparse
import json
import time
from pathlib import Path

import numba
import numpy as np

from formats.gguf_reader import GGUFReader

RESULTS = Path(__file__).parent / "results"
STREAM_BYTES = 1 << 30


@numba.njit(parallel=True, cache=True)
def _sum_words(words):
    total = np.uint64(0)
    for i in numba.prange(words.shape[0]):
        total += words[i]
    return total


def read_bandwidth(threads: int) -> float:
    """GB/s of a read-only stream through memory with `threads` threads, best of 5 passes."""
    numba.set_num_threads(threads)
    words = np.ones(STREAM_BYTES // 8, np.uint64)
    _sum_words(words[:1024])
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        _sum_words(words)
        best = min(best, time.perf_counter() - started)
    return STREAM_BYTES / best / 1e9


def bytes_per_token(path: str) -> int:
    """Bytes of the matrices one decode step reads (see the module's docstring)."""
    tensors = GGUFReader(path).tensors
    tied = "output.weight" not in tensors
    return sum(
        t.nbytes for name, t in tensors.items() if len(t.shape) == 2 and (name != "token_embd.weight" or tied)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    bandwidth = read_bandwidth(args.threads)
    print(f"read bandwidth, {args.threads} threads: {bandwidth:.1f} GB/s")
    print("| file | MB per token | roofline tg | engine, isa: tg128 (share of the roofline) |")
    print("|---|---|---|---|")
    for model in args.models:
        per_token = bytes_per_token(model)
        roof = bandwidth * 1e9 / per_token
        cells = []
        saved = RESULTS / f"edge_vs_llamacpp-{Path(model).stem}.json"
        if saved.exists():
            result = json.loads(saved.read_text())
            for level in ("avx2", "native"):
                for engine, figures in result.get(level, {}).items():
                    if "tg128_tokens_per_s" in figures:
                        tg = figures["tg128_tokens_per_s"]
                        cells.append(f"{engine} {level}: {tg:.1f} ({tg / roof:.0%})")
        print(f"| {Path(model).name} | {per_token / 1e6:.1f} | {roof:.0f} tokens/s | {'; '.join(cells)} |")


if __name__ == "__main__":
    main()

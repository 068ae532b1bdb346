"""The cloud engine's CPU attention kernel on one prompt's prefill, against the torch reference
backend (gather + SDPA) in the same run: alternating rounds, medians reported.

    .venv/bin/python benchmarks/paged_attention.py [--tokens 1000] [--threads 2] [--rounds 5]

One layer of the demo model's shape (9 heads, 3 KV heads, D 64, bfloat16, 16-token blocks):
the whole prompt as one step, each query attending causally to the prompt before it.
"""

import argparse
import statistics
import time

import torch

from cloud.attention_backend import CpuPagedAttention, TorchReferenceAttention
from cloud.kernels import use_cpu_threads
from cloud.paged_attention import AttentionMetadata

HEADS, KV_HEADS, HEAD_DIM, BLOCK_SIZE = 9, 3, 64, 16


def prefill_case(tokens: int):
    num_blocks = tokens // BLOCK_SIZE + 1
    generator = torch.Generator().manual_seed(0)
    randn = lambda *shape: torch.randn(*shape, generator=generator).to(torch.bfloat16)  # noqa: E731
    caches = (
        randn(num_blocks, BLOCK_SIZE, KV_HEADS, HEAD_DIM),
        randn(num_blocks, BLOCK_SIZE, KV_HEADS, HEAD_DIM),
    )
    step = (
        randn(tokens, HEADS, HEAD_DIM),
        randn(tokens, KV_HEADS, HEAD_DIM),
        randn(tokens, KV_HEADS, HEAD_DIM),
    )
    metadata = AttentionMetadata(
        slot_mapping=torch.arange(tokens),
        query_start_loc=[0, tokens],
        seq_lens=[tokens],
        block_tables=torch.arange(num_blocks)[None, :],
        positions=torch.arange(tokens),
        num_computed_tokens=[0],
    )
    return caches, step, metadata


def seconds_per_layer(backend, case) -> float:
    (k_cache, v_cache), (q, k, v), metadata = case
    plan = backend.plan(metadata)
    started = time.perf_counter()
    backend.forward(q, k, v, k_cache, v_cache, plan)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    use_cpu_threads(args.threads)
    case = prefill_case(args.tokens)
    backends = {"kernel": CpuPagedAttention(), "torch-reference": TorchReferenceAttention()}
    times = {name: [] for name in backends}
    for backend in backends.values():
        seconds_per_layer(backend, case)  # compile / warm
    for round_index in range(args.rounds):
        names = list(backends) if round_index % 2 == 0 else list(reversed(backends))
        for name in names:
            times[name].append(min(seconds_per_layer(backends[name], case) for _ in range(3)))
    medians = {name: statistics.median(values) for name, values in times.items()}
    flops = 4 * HEADS * HEAD_DIM * args.tokens * args.tokens / 2
    for name, seconds in medians.items():
        print(f"{name:16s} {seconds * 1e3:7.1f} ms/layer  {flops / seconds / 1e9:6.1f} GFLOP/s")
    print(f"kernel / reference time: {medians['kernel'] / medians['torch-reference']:.2f}x")


if __name__ == "__main__":
    main()

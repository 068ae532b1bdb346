"""The cloud engine's CPU attention kernel against the torch reference backend (gather + SDPA)
in the same run, on one prompt's prefill and on a decode step: alternating rounds, medians.

    .venv/bin/python benchmarks/paged_attention.py [--tokens 1000] [--decodes 16] [--threads 2] [--rounds 5]

One layer of the demo model's shape (9 heads, 3 KV heads, D 64, bfloat16, 16-token blocks).
Prefill: the whole prompt as one step, each query attending causally to the prompt before it.
Decode: `--decodes` requests of one query each, their contexts 100-500 tokens (seed 0).
"""

import argparse
import statistics
import time

import torch

from cloud.kernels import use_cpu_threads
from cloud.layers.attention import AttentionMetadata, CpuPagedAttention, TorchReferenceAttention

HEADS, KV_HEADS, HEAD_DIM, BLOCK_SIZE = 9, 3, 64, 16


def case_for(backend, lengths: list[int], new: list[int]):
    """Caches in the backend's layout (random context), this step's q/k/v and metadata: request r
    adds new[r] tokens at the end of its lengths[r], its blocks consecutive."""
    generator = torch.Generator().manual_seed(0)
    randn = lambda *shape: torch.randn(*shape, generator=generator).to(torch.bfloat16)  # noqa: E731
    blocks = [-(-n // BLOCK_SIZE) for n in lengths]
    shapes = backend.kv_cache_shapes(sum(blocks) + 1, BLOCK_SIZE, KV_HEADS, HEAD_DIM)
    caches = tuple(randn(*shape) for shape in shapes)
    tables = torch.zeros(len(lengths), max(blocks), dtype=torch.int64)
    for r, count in enumerate(blocks):
        tables[r, :count] = torch.arange(sum(blocks[:r]) + 1, sum(blocks[: r + 1]) + 1)
    positions = torch.cat([torch.arange(n - m, n) for n, m in zip(lengths, new, strict=True)])
    rows = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(new))
    total = sum(new)
    metadata = AttentionMetadata(
        slot_mapping=tables[rows, positions // BLOCK_SIZE] * BLOCK_SIZE + positions % BLOCK_SIZE,
        query_start_loc=[0, *torch.cumsum(torch.tensor(new), 0).tolist()],
        seq_lens=lengths,
        block_tables=tables,
        positions=positions,
        num_computed_tokens=[n - m for n, m in zip(lengths, new, strict=True)],
    )
    return (
        caches,
        (randn(total, HEADS, HEAD_DIM), randn(total, KV_HEADS, HEAD_DIM), randn(total, KV_HEADS, HEAD_DIM)),
        metadata,
    )


def seconds_per_layer(backend, case) -> float:
    (k_cache, v_cache), (q, k, v), metadata = case
    plan = backend.plan(metadata)
    started = time.perf_counter()
    backend.forward(q, k, v, k_cache, v_cache, plan)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--decodes", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    use_cpu_threads(args.threads)
    lengths = torch.randint(100, 501, (args.decodes,), generator=torch.Generator().manual_seed(0)).tolist()
    workloads = {"prefill": ([args.tokens], [args.tokens]), "decode": (lengths, [1] * args.decodes)}
    for workload, (lengths, new) in workloads.items():
        medians = compare(args, lengths, new)
        print(f"{workload}: " + ", ".join(f"{name} {ms:.3f} ms/layer" for name, ms in medians.items()))
        print(f"{workload}: kernel / reference time {medians['kernel'] / medians['torch-reference']:.2f}x")


def compare(args, lengths: list[int], new: list[int]) -> dict[str, float]:
    """Median milliseconds per layer of each backend, rounds alternating their order."""
    backends = {"kernel": CpuPagedAttention(), "torch-reference": TorchReferenceAttention()}
    cases = {name: case_for(backend, lengths, new) for name, backend in backends.items()}
    times = {name: [] for name in backends}
    for name, backend in backends.items():
        seconds_per_layer(backend, cases[name])  # compile / warm
    for round_index in range(args.rounds):
        names = list(backends) if round_index % 2 == 0 else list(reversed(backends))
        for name in names:
            times[name].append(min(seconds_per_layer(backends[name], cases[name]) for _ in range(3)))
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


if __name__ == "__main__":
    main()

"""Cloud engine vs Hugging Face transformers generate, on one seeded workload, in one run.

    .venv/bin/python benchmarks/cloud_throughput.py [--model FILE] [--num-requests 64]

Workload (seed 0): prompts of 32-256 random tokens, outputs of 16-256 tokens, greedy, EOS ignored.
Engines, each in a fresh process: ours (continuous batching, paged KV cache), transformers with
static batches of 16 and with batch size 1. Reported: generated tokens/s, wall time, peak RSS,
mean KV-cache fill at saturation (ours). A second workload puts a long shared system prompt in
front of every prompt: prefix-cache hit rate and the speedup over the same run without caching.
Prints a table with ratios and writes benchmarks/results/cloud_throughput.json.
"""

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "cloud_throughput.json"
SYSTEM_PROMPT_TOKENS = 192


def workload(num_requests: int, vocab_size: int, shared_prefix: bool) -> list[tuple[list[int], int]]:
    import numpy as np

    rng = np.random.default_rng(0)
    prefix = rng.integers(100, vocab_size, SYSTEM_PROMPT_TOKENS).tolist() if shared_prefix else []
    requests = []
    for _ in range(num_requests):
        prompt = rng.integers(100, vocab_size, int(rng.integers(32, 257))).tolist()
        requests.append((prefix + prompt, int(rng.integers(16, 257))))
    return requests


def run_ours(model: str, num_requests: int, shared_prefix: bool, prefix_caching: bool) -> dict:
    from cloud import LLM, SamplingParams
    from shared.engine import EngineRequest

    llm = LLM(
        model,
        kv_cache_gib=1.0,
        max_num_seqs=64,
        max_num_batched_tokens=1024,
        enable_prefix_caching=prefix_caching,
    )
    requests = workload(num_requests, llm.engine.model_config.vocab_size, shared_prefix)
    engine = llm.engine
    for index, (prompt, max_tokens) in enumerate(requests):
        params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
        engine.add(EngineRequest(f"r{index}", prompt, params))
    fills, generated = [], 0
    started = time.perf_counter()
    while engine.has_work():
        generated += len(engine.step().outputs)
        if engine.scheduler.waiting:  # saturated: requests are queueing for room
            fills.append(engine.metrics.kv_cache_fill)
    wall = time.perf_counter() - started
    manager = engine.block_manager
    return {
        "generated_tokens": generated,
        "wall_s": wall,
        "tokens_per_s": generated / wall,
        "mean_kv_fill_at_saturation": sum(fills) / len(fills) if fills else None,
        "prefix_hit_rate": manager.num_prefix_hits / manager.num_prefix_queries
        if manager.num_prefix_queries
        else 0,
        "preemptions": engine.scheduler.num_preemptions,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_transformers(model: str, num_requests: int, batch_size: int) -> dict:
    import torch
    import transformers

    path = Path(model)
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, torch_dtype=torch.float32
    ).eval()
    requests = workload(num_requests, hf.config.vocab_size, shared_prefix=False)
    generated = 0
    started = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(requests), batch_size):
            batch = requests[start : start + batch_size]
            width = max(len(p) for p, _ in batch)
            ids = torch.tensor([[0] * (width - len(p)) + p for p, _ in batch])  # left padding
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p, _ in batch])
            longest = max(n for _, n in batch)  # a static batch runs until its longest request ends
            hf.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=longest,
                min_new_tokens=longest,
                do_sample=False,
                pad_token_id=0,
            )
            generated += sum(n for _, n in batch)  # useful tokens only
    wall = time.perf_counter() - started
    return {
        "generated_tokens": generated,
        "wall_s": wall,
        "tokens_per_s": generated / wall,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def worker(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--worker", *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model")
    parser.add_argument("--num-requests", type=int, default=64)
    parser.add_argument("--batch1-requests", type=int, default=None, help="requests for the batch-size-1 run")
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is None:
        from formats.model_pull import DEFAULT_MODEL, pull

        args.model = str(pull(DEFAULT_MODEL))
    if args.worker is not None:
        kind, *rest = args.worker
        if kind == "ours":
            shared, caching = rest[0] == "shared", rest[1] == "cache"
            print(json.dumps(run_ours(args.model, args.num_requests, shared, caching)))
        else:
            print(json.dumps(run_transformers(args.model, args.num_requests, int(rest[0]))))
        return
    n, n1 = str(args.num_requests), args.batch1_requests or args.num_requests
    ours = worker("ours", "plain", "cache", "--model", args.model, "--num-requests", n)
    static16 = worker("hf", "16", "--model", args.model, "--num-requests", n)
    static1 = worker("hf", "1", "--model", args.model, "--num-requests", str(n1))
    shared_cached = worker("ours", "shared", "cache", "--model", args.model, "--num-requests", n)
    shared_plain = worker("ours", "shared", "nocache", "--model", args.model, "--num-requests", n)
    rows = [
        ("hybridgw cloud", ours),
        ("transformers, static batches of 16", static16),
        (f"transformers, batch size 1 ({n1} requests)", static1),
    ]
    print(f"{args.num_requests} requests, model {Path(args.model).name}, float32, CPU")
    print(f"{'engine':44} {'tokens/s':>9} {'wall s':>8} {'peak RSS MiB':>13} {'ours / it':>10}")
    for label, result in rows:
        ratio = ours["tokens_per_s"] / result["tokens_per_s"]
        print(
            f"{label:44} {result['tokens_per_s']:>9.1f} {result['wall_s']:>8.1f} "
            f"{result['peak_rss_mib']:>13.0f} {ratio:>10.2f}"
        )
    print(f"mean KV-cache fill at saturation (ours): {ours['mean_kv_fill_at_saturation']}")
    speedup = shared_cached["tokens_per_s"] / shared_plain["tokens_per_s"]
    print(
        f"shared {SYSTEM_PROMPT_TOKENS}-token system prompt: prefix-cache hit rate "
        f"{shared_cached['prefix_hit_rate']:.2%}, speedup with caching {speedup:.2f}x"
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "num_requests": args.num_requests,
                "ours": ours,
                "transformers_static16": static16,
                "transformers_batch1": static1,
                "shared_prefix_cached": shared_cached,
                "shared_prefix_uncached": shared_plain,
                "prefix_cache_speedup": speedup,
            },
            indent=2,
        )
    )
    print(f"saved {RESULTS}")


if __name__ == "__main__":
    main()

"""Cloud engine vs transformers static batching (and vLLM's CPU build), one seeded workload, one run.

    .venv/bin/python benchmarks/cloud_throughput.py [--model FILE] [--num-requests 16]
        [--dtypes bfloat16,float32] [--rounds 3] [--vllm-python /path/to/venv/bin/python]
        [--isa native|avx2]

Workload (seed 0): prompts of 32-256 random tokens, outputs of 16-256 tokens, greedy, EOS ignored.
Systems, each in a fresh process per run, in alternating order round by round: ours (`cloud.LLM`:
continuous batching, paged KV cache), transformers `generate` with one static batch per 16
requests, and vLLM's offline `LLM` when `--vllm-python` names a Python that has it (setup:
docs/benchmarks.md; not in CI). Reported per dtype: median generated tokens/s, wall time, start to
ready (construct the engine, load the weights), peak RSS, mean KV-cache fill at saturation (ours),
and ours / each, under the ISA level every system ran at. `--isa avx2` runs every system as on a
CPU with AVX2 and no AVX-512 (issue 63), whatever the host: torch's kernels dispatched at AVX2
(ATEN_CPU_CAPABILITY), oneDNN's and MKL's capped at AVX2, numba compiling for an AVX2 Zen 3. A
last section puts a shared system prompt in front of every prompt: prefix-cache hit rate and the
speedup over the same run without caching. Writes benchmarks/results/cloud_throughput.json
(cloud_throughput_avx2.json under --isa avx2).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "cloud_throughput.json"
SYSTEM_PROMPT_TOKENS = 192
STARTED = time.perf_counter()
RESULT_MARK = "cloud_throughput result: "  # the worker's line among whatever an engine prints
AVX2_FEATURES = "+avx,+avx2,+f16c,+fma,+bmi,+bmi2,+popcnt,+sse4.2"  # tests/edge/test_isa_levels.py
ISA_ENV = {
    "native": {},
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "NUMBA_CPU_NAME": "znver3",
        "NUMBA_CPU_FEATURES": AVX2_FEATURES,
    },
}


def workload(num_requests: int, vocab_size: int, shared_prefix: bool) -> list[tuple[list[int], int]]:
    import numpy as np

    rng = np.random.default_rng(0)
    prefix = rng.integers(100, vocab_size, SYSTEM_PROMPT_TOKENS).tolist() if shared_prefix else []
    requests = []
    for _ in range(num_requests):
        prompt = rng.integers(100, vocab_size, int(rng.integers(32, 257))).tolist()
        requests.append((prefix + prompt, int(rng.integers(16, 257))))
    return requests


def finish(generated: int, wall: float, ready: float, **extra) -> dict:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"generated_tokens": generated, "wall_s": wall, "tokens_per_s": generated / wall} | {
        "ready_s": ready,
        "peak_rss_mib": peak,
        "isa": isa_level(),
        **extra,
    }


def isa_level() -> str:
    """The level this worker's kernels ran at: torch's dispatch, oneDNN's cap, numba's target."""
    import torch

    numba_target = os.environ.get("NUMBA_CPU_NAME", "host")
    onednn = os.environ.get("ONEDNN_MAX_CPU_ISA", "host")
    return f"torch {torch.backends.cpu.get_cpu_capability()}, oneDNN {onednn}, numba {numba_target}"


def run_ours(model: str, num_requests: int, dtype: str, shared_prefix: bool, caching: bool) -> dict:
    from cloud import LLM, SamplingParams
    from shared.engine import EngineRequest

    llm = LLM(model, dtype=dtype, kv_cache_gib=1.0, max_num_seqs=64, enable_prefix_caching=caching)
    ready = time.perf_counter() - STARTED
    engine = llm.engine
    requests = workload(num_requests, engine.model_config.vocab_size, shared_prefix)
    fills, generated = [], 0
    started = time.perf_counter()
    for index, (prompt, max_tokens) in enumerate(requests):
        params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
        engine.add(EngineRequest(f"r{index}", prompt, params))
    while engine.has_work():
        generated += len(engine.step().outputs)
        if engine.scheduler.waiting:  # saturated: requests are queueing for room
            fills.append(engine.metrics.kv_cache_fill)
    manager = engine.block_manager
    queries = manager.num_prefix_queries
    return finish(
        generated,
        time.perf_counter() - started,
        ready,
        mean_kv_fill_at_saturation=statistics.fmean(fills) if fills else None,
        prefix_hit_rate=manager.num_prefix_hits / queries if queries else 0.0,
        preemptions=engine.scheduler.num_preemptions,
    )


def run_transformers(model: str, num_requests: int, dtype: str, batch_size: int) -> dict:
    import torch
    import transformers

    from cloud.engine.llm_engine import default_device

    device = default_device()  # the GPU where there is one, as ours
    path = Path(model)
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=getattr(torch, dtype)
    )
    hf = hf.to(device).eval()
    ready = time.perf_counter() - STARTED
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
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                max_new_tokens=longest,
                min_new_tokens=longest,
                do_sample=False,
                pad_token_id=0,
            )
            generated += sum(n for _, n in batch)  # useful tokens only
    return finish(generated, time.perf_counter() - started, ready)


def run_vllm(checkpoint: str, num_requests: int, dtype: str) -> dict:
    """Under a Python with vLLM's CPU build: its offline LLM on the same token prompts."""
    from vllm import LLM, SamplingParams

    llm = LLM(model=checkpoint, dtype=dtype, max_model_len=2048, seed=0)
    ready = time.perf_counter() - STARTED
    vocab_size = llm.llm_engine.model_config.get_vocab_size()
    requests = workload(num_requests, vocab_size, shared_prefix=False)
    prompts = [{"prompt_token_ids": prompt} for prompt, _ in requests]
    params = [SamplingParams(temperature=0, max_tokens=n, ignore_eos=True) for _, n in requests]
    started = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    generated = sum(len(o.outputs[0].token_ids) for o in outputs)
    return finish(generated, time.perf_counter() - started, ready)


def worker(python: str, *args: str, env: dict | None = None, script: str = __file__) -> dict:
    """Runs `script --worker ARGS` in a fresh process; returns the result line it printed."""
    command = [python, script, "--worker", *args]
    result = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})}
    )
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.stderr[-3000:]}")
    lines = [line for line in result.stdout.splitlines() if line.startswith(RESULT_MARK)]
    return json.loads(lines[-1].removeprefix(RESULT_MARK))


def default_model() -> str:
    """The demo model's file, pulled once."""
    from formats.model_pull import DEFAULT_MODEL, pull

    return str(pull(DEFAULT_MODEL))


def hf_checkpoint(model: str) -> str:
    """The model as a Hugging Face checkpoint (what vLLM loads), converted once."""
    directory = Path(model).with_suffix(".hf")
    if not directory.exists():
        hybridgw = Path(sys.executable).parent / "hybridgw"
        subprocess.run([str(hybridgw), "convert", model, str(directory), "--to", "safetensors"], check=True)
    return str(directory)


def run_worker(args: argparse.Namespace) -> None:
    kind, dtype, *rest = args.worker
    n = args.num_requests
    if kind == "ours":
        result = run_ours(args.model, n, dtype, rest[0] == "shared", rest[1] == "cache")
    elif kind == "vllm":
        result = run_vllm(rest[0], n, dtype)
    else:
        result = run_transformers(args.model, n, dtype, int(rest[0]))
    print(RESULT_MARK + json.dumps(result), flush=True)


def systems(args: argparse.Namespace, dtype: str) -> dict[str, tuple]:
    """label -> the worker's (python, arguments, env)."""
    common = ["--model", args.model, "--num-requests", str(args.num_requests)]
    isa = ISA_ENV[args.isa]
    found = {
        "hybridgw cloud": (sys.executable, ["ours", dtype, "plain", "cache", *common], isa),
        "transformers, static batches of 16": (sys.executable, ["hf", dtype, "16", *common], isa),
    }
    if args.vllm_python:
        vllm_args = ["vllm", dtype, hf_checkpoint(args.model), *common]
        found["vLLM CPU build"] = (args.vllm_python, vllm_args, {**isa, "VLLM_CPU_KVCACHE_SPACE": "1"})
    return found


def measure(args: argparse.Namespace) -> dict[str, dict[str, list[dict]]]:
    """dtype -> label -> the runs, rounds alternating the order of the systems."""
    runs: dict[str, dict[str, list[dict]]] = {}
    for round_index in range(args.rounds):
        for dtype in args.dtypes:
            order = list(systems(args, dtype).items())
            for label, (python, worker_args, env) in order[:: 1 if round_index % 2 == 0 else -1]:
                result = worker(python, *worker_args, env=env)
                runs.setdefault(dtype, {}).setdefault(label, []).append(result)
                print(f"round {round_index + 1} {dtype:9} {label:36} {result['tokens_per_s']:7.1f} tok/s")
    return runs


def median_of(results: list[dict], key: str):
    values = [r[key] for r in results if r.get(key) is not None]
    return statistics.median(values) if values else None


def report(runs: dict[str, dict[str, list[dict]]], args: argparse.Namespace) -> dict:
    import torch

    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU"
    model = Path(args.model).name
    print(f"\n{args.num_requests} requests, model {model}, {device}, medians of {args.rounds}")
    levels = {r["isa"] for by_label in runs.values() for results in by_label.values() for r in results}
    print(f"ISA level (--isa {args.isa}): {'; '.join(sorted(levels))}")
    print(
        f"{'dtype':9} {'system':36} {'tok/s':>7} {'wall s':>7} {'ready s':>8} {'RSS MiB':>8} {'ours/it':>8}"
    )
    summary = {}
    for dtype, by_label in runs.items():
        ours = median_of(by_label["hybridgw cloud"], "tokens_per_s")
        for label, results in by_label.items():
            tokens_per_s = median_of(results, "tokens_per_s")
            row = {key: median_of(results, key) for key in ("wall_s", "ready_s", "peak_rss_mib")}
            row |= {"tokens_per_s": tokens_per_s, "ours_over_it": ours / tokens_per_s, "runs": results}
            summary.setdefault(dtype, {})[label] = row
            print(
                f"{dtype:9} {label:36} {tokens_per_s:7.1f} {row['wall_s']:7.1f} {row['ready_s']:8.1f} "
                f"{row['peak_rss_mib']:8.0f} {row['ours_over_it']:8.2f}"
            )
        fill = median_of(by_label["hybridgw cloud"], "mean_kv_fill_at_saturation")
        print(f"{dtype:9} mean KV-cache fill at saturation (ours): {fill}")
    return summary


def prefix_section(args: argparse.Namespace) -> dict:
    dtype, common = args.dtypes[0], ["--model", args.model, "--num-requests", str(args.num_requests)]
    isa = ISA_ENV[args.isa]
    cached = worker(sys.executable, "ours", dtype, "shared", "cache", *common, env=isa)
    plain = worker(sys.executable, "ours", dtype, "shared", "nocache", *common, env=isa)
    speedup = cached["tokens_per_s"] / plain["tokens_per_s"]
    print(
        f"shared {SYSTEM_PROMPT_TOKENS}-token system prompt ({dtype}): prefix-cache hit rate "
        f"{cached['prefix_hit_rate']:.2%}, speedup with caching {speedup:.2f}x"
    )
    return {"cached": cached, "uncached": plain, "speedup": speedup}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model")
    parser.add_argument("--num-requests", type=int, default=16)
    parser.add_argument("--dtypes", type=lambda s: s.split(","), default=["bfloat16", "float32"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vllm-python", help="a Python with vLLM's CPU build (skipped without)")
    parser.add_argument("--isa", choices=sorted(ISA_ENV), default="native", help="run as on an AVX2-only CPU")
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.model = args.model or default_model()
    if args.worker is not None:
        return run_worker(args)
    summary = report(measure(args), args)
    prefix = prefix_section(args)
    results = RESULTS.with_stem(f"{RESULTS.stem}_{args.isa}") if args.isa != "native" else RESULTS
    results.parent.mkdir(exist_ok=True)
    record = {
        "num_requests": args.num_requests,
        "rounds": args.rounds,
        "isa": args.isa,
        "by_dtype": summary,
        "prefix": prefix,
    }
    results.write_text(json.dumps(record, indent=2))
    print(f"saved {results}")


if __name__ == "__main__":
    main()

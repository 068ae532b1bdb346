"""Does torch.compile pay on the cloud engine's CPU path? Four variants of the model forward, one run.

    .venv/bin/python benchmarks/torch_compile.py [--model FILE] [--num-requests 16] [--rounds 2]
        [--dtype auto]

The workload of benchmarks/cloud_throughput.py (seed 0, greedy, EOS ignored), through `cloud.LLM`
with its forward as it ships, or wrapped in `torch.compile(dynamic=True)` (inductor, the
default backend), over either the CPU kernels (numba: paged attention, RoPE, RMSNorm, SiLU; the
compiled graph breaks around each) or the torch formulations every other device runs (reference
attention, torch RMSNorm/RoPE/SiLU: what inductor can fuse). Each variant in a fresh process,
rounds alternating the order; each process runs the workload twice: the first pass includes
compilation, the second is the steady state. Medians reported, and each variant over the shipped
one. Writes benchmarks/results/torch_compile.json.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import cloud_throughput

RESULTS = Path(__file__).parent / "results" / "torch_compile.json"
VARIANTS = {  # label -> (CPU kernels, torch.compile)
    "kernels, eager (ships)": (True, False),
    "kernels, compiled": (True, True),
    "torch ops, eager": (False, False),
    "torch ops, compiled": (False, True),
}


def without_kernels() -> None:
    """Every op takes its torch formulation, as on CUDA (the benchmark's switch, not the engine's)."""
    from cloud.layers import activation, attention, rms_norm, rotary

    for module in (activation, attention, rms_norm, rotary):
        module.has_kernels = lambda device, dtype: False


def opaque_linears() -> None:
    """The oneDNN-packed linears stay as they are: inductor lowers their op only for weights frozen
    into the graph, and these are the engine's own tensors."""
    import torch

    from cloud.layers.linear import PackedLinearWeight

    PackedLinearWeight.__call__ = torch.compiler.disable(PackedLinearWeight.__call__)


def opaque_kernels() -> None:
    """Dynamo leaves each kernel call to run as it is (it would trace the numpy views otherwise)."""
    import torch

    from cloud.layers.attention import CpuPagedAttention
    from cloud.layers.rotary import RotaryEmbedding
    from cloud.models import llama

    for name in ("rms_norm", "silu_and_mul"):
        setattr(llama, name, torch.compiler.disable(getattr(llama, name)))
    for owner, name in ((RotaryEmbedding, "rotate"), (RotaryEmbedding, "tables")):
        setattr(owner, name, torch.compiler.disable(getattr(owner, name)))
    CpuPagedAttention.forward = torch.compiler.disable(CpuPagedAttention.forward)


def one_pass(engine, requests, index: int) -> float:
    from shared.engine import EngineRequest
    from shared.sampling import SamplingParams

    generated, started = 0, time.perf_counter()
    for number, (prompt, max_tokens) in enumerate(requests):
        params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
        engine.add(EngineRequest(f"p{index}-r{number}", prompt, params))
    while engine.has_work():
        generated += len(engine.step().outputs)
    return generated / (time.perf_counter() - started)


def run_variant(model: str, num_requests: int, dtype: str, kernels: bool, compiled: bool) -> dict:
    import torch

    from cloud import LLM

    if not kernels:
        without_kernels()
    elif compiled:
        opaque_kernels()
    llm = LLM(model, dtype=dtype, kv_cache_gib=1.0, max_num_seqs=64, enable_prefix_caching=False)
    engine = llm.engine
    network = engine.runner.model
    if compiled:
        opaque_linears()
        network.forward = torch.compile(network.forward, dynamic=True)
    requests = cloud_throughput.workload(num_requests, engine.model_config.vocab_size, False)
    started = time.perf_counter()
    first = one_pass(engine, requests, 0)
    first_wall = time.perf_counter() - started
    return {"first_pass_tok_s": first, "first_pass_s": first_wall, "tok_s": one_pass(engine, requests, 1)}


def measure(args: argparse.Namespace) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {label: [] for label in VARIANTS}
    for round_index in range(args.rounds):
        order = list(VARIANTS.items())[:: 1 if round_index % 2 == 0 else -1]
        for label, (kernels, compiled) in order:
            flags = ["kernels" if kernels else "torch", "compiled" if compiled else "eager"]
            common = ["--model", args.model, "--num-requests", str(args.num_requests), "--dtype", args.dtype]
            result = cloud_throughput.worker(sys.executable, *flags, *common, script=__file__)
            runs[label].append(result)
            print(
                f"round {round_index + 1} {label:24} {result['tok_s']:7.1f} tok/s "
                f"(first pass {result['first_pass_tok_s']:6.1f}, {result['first_pass_s']:5.1f} s)"
            )
    return runs


def report(runs: dict[str, list[dict]]) -> dict:
    medians = {
        label: {key: statistics.median(r[key] for r in results) for key in results[0]}
        for label, results in runs.items()
    }
    shipped = medians["kernels, eager (ships)"]["tok_s"]
    print(f"\n{'variant':24} {'tok/s':>7} {'÷ ships':>8} {'1st pass tok/s':>15} {'1st pass s':>11}")
    for label, row in medians.items():
        row["over_shipped"] = row["tok_s"] / shipped
        print(
            f"{label:24} {row['tok_s']:7.1f} {row['over_shipped']:8.2f} "
            f"{row['first_pass_tok_s']:15.1f} {row['first_pass_s']:11.1f}"
        )
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for flag, default in (("--model", None), ("--dtype", "auto")):
        parser.add_argument(flag, default=default)
    for flag, default in (("--num-requests", 16), ("--rounds", 2)):
        parser.add_argument(flag, type=int, default=default)
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.model = args.model or cloud_throughput.default_model()
    if args.worker is not None:
        kernels, compiled = (flag in args.worker for flag in ("kernels", "compiled"))
        result = run_variant(args.model, args.num_requests, args.dtype, kernels, compiled)
        print(cloud_throughput.RESULT_MARK + json.dumps(result), flush=True)
        return
    record = {"num_requests": args.num_requests, "rounds": args.rounds, "dtype": args.dtype}
    record["variants"] = report(measure(args))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2))
    print(f"saved {RESULTS}")


if __name__ == "__main__":
    main()

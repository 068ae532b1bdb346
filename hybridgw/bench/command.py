"""`hybridgw bench serve`: the command line of the serving benchmark."""

import argparse
import asyncio
import json
import sys
from pathlib import Path

from hybridgw.bench.client import RunSettings, run_workload
from hybridgw.bench.plots import plot_run
from hybridgw.bench.report import format_table, summarize
from hybridgw.bench.workloads import WORKLOADS, WorkloadError, load_workload


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="benchmarks")
    kinds = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    serve = kinds.add_parser(
        "serve", help="replay a workload against an OpenAI-compatible server (ours, llama-server, vLLM)"
    )
    serve.add_argument("--url", required=True, help="the server's API base, e.g. http://127.0.0.1:8080/v1")
    serve.add_argument("--model", required=True)
    serve.add_argument(
        "--workload", default="burst-chat", help=f"{' | '.join(WORKLOADS)} or a JSON-lines file"
    )
    pace = serve.add_mutually_exclusive_group()
    pace.add_argument("--rate", type=float, help="requests per second (Poisson); default: the workload's")
    pace.add_argument("--concurrency", type=int, help="at most this many requests in flight")
    count = serve.add_mutually_exclusive_group()
    count.add_argument("--num-requests", type=int, help="default: the workload's own")
    count.add_argument("--duration", type=float, help="seconds: repeat the workload until then")
    serve.add_argument("--seed", type=int, default=0)
    serve.add_argument("--slo-ttft-ms", type=float, help="goodput counts requests within it")
    serve.add_argument("--slo-tpot-ms", type=float)
    serve.add_argument("--api-key", help="sent as a bearer token")
    serve.add_argument("--no-ignore-eos", action="store_true", help="let requests end at EOS")
    serve.add_argument("--out", type=Path, help="folder for result.json and result.png")
    serve.add_argument("--label", default="", help="a name for this run in the files and the plot")
    serve.set_defaults(handler=_serve)


def _check(args: argparse.Namespace) -> None:
    for name in ("rate", "duration", "slo_ttft_ms", "slo_tpot_ms"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive")
    for name in ("concurrency", "num_requests"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1")


def _serve(args: argparse.Namespace) -> int:
    _check(args)
    try:
        requests = load_workload(args.workload, args.seed, args.num_requests)
    except WorkloadError as error:
        raise ValueError(str(error)) from None
    settings = RunSettings(
        base_url=args.url,
        model=args.model,
        rate=args.rate,
        concurrency=args.concurrency,
        duration_s=args.duration,
        seed=args.seed,
        ignore_eos=not args.no_ignore_eos,
        api_key=args.api_key,
    )
    results, wall = asyncio.run(run_workload(requests, settings))
    summary = summarize(results, wall, args.slo_ttft_ms, args.slo_tpot_ms)
    summary |= {"workload": args.workload, "seed": args.seed, "url": args.url, "label": args.label}
    print(format_table(summary))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = f"{args.label}-" if args.label else ""
        (args.out / f"{stem}result.json").write_text(json.dumps(summary, indent=2) + "\n")
        title = f"{args.label or args.url} · {args.workload}"
        plot = plot_run(results, wall, args.out / f"{stem}result.png", title)
        print(f"wrote {args.out / f'{stem}result.json'} and {plot}", file=sys.stderr)
    return 0 if summary["completed"] else 1

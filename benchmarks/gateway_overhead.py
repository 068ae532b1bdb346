"""What the gateway adds: the same streamed requests to a node directly and through the gateway.

    .venv/bin/python benchmarks/gateway_overhead.py [--tokens 16] [--step-ms 5] [--requests 1200]
        [--baseline TREE]

`--baseline TREE`: a second gateway, run from another checkout (say `git worktree add TREE
COMMIT`), is measured in the same rounds, so a change's cost is a same-run ratio.

The node is benchmarks/echo_node.py: no model behind it, it steps like an engine (the first token
at once, then one token per running request every --step-ms), so only protocol and gateway work is
measured, on a realistic token cadence. "Direct" is a client of the node's Session RPC, the same
protocol the gateway speaks to its edge nodes, so the difference is the gateway's own work: HTTP,
JSON, templating and tokenization, the privacy scan (the default mode, auto: every message is
scanned for personal data), routing, detokenization, SSE. A client making one Generate call
per request is measured too, for reference, and so is a null proxy (benchmarks/null_proxy.py: HTTP
in, Session out, no gateway work on the same aiohttp/grpc.aio stack): what any such hop costs here,
so that the gateway's own work is the rest. The gateway (and the null proxy) runs pinned to core 0,
the node to core 1; each path's clients run in their own process (benchmarks/overhead_clients.py),
on the core apart from the server they call (the node's clients on core 0, the gateway's on core
1), as a client across a network would be, so every path pays its own wake-ups across cores and no
client takes CPU from the server it measures. Each round's clients start spread over one request's
duration (as a load generator ramps up), so the level measures steady traffic, not 32 or 256
requests arriving in the same instant, again each round; each level's requests go in rounds with
the paths taking turns, so a drifting machine drifts under every path alike. For 1, 32 and 256
concurrent clients: time to first token and to the last token, p50 and p99, the added latency
(first token, whole stream), and the request rate the gateway sustained. Writes
benchmarks/results/gateway_overhead.json.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from overhead_clients import ClientProcess  # beside this script

RESULTS = Path(__file__).parent / "results" / "gateway_overhead.json"
ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


LEVELS = (1, 32, 256)
ROUNDS = 10  # each level's requests in up to this many rounds, the paths taking turns (the VM drifts)


def _wait_for(port: int) -> None:
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)


def _count(total: int, concurrency: int) -> int:
    """Requests at a level: at least 16 per client, so that most of them run at full concurrency."""
    return max(total // (4 if concurrency == 1 else 1), 16 * concurrency)


def measure(paths: dict[str, ClientProcess], total: int) -> dict[str, dict]:
    """Every level's requests in up to ROUNDS rounds (each at least 4 requests per client), the
    paths taking turns in a rotating order, so a machine that drifts during the run drifts under
    every path alike.
    -> {path: {clients: (ttfts, totals, requests per second while every client was sending)}}."""
    results: dict[str, dict] = {name: {} for name in paths}
    for concurrency in LEVELS:
        rounds = max(1, min(ROUNDS, _count(total, concurrency) // (4 * concurrency)))
        per_round = _count(total, concurrency) // rounds
        gathered = {name: ([], [], 0, 0.0) for name in paths}
        order = list(paths)
        for round_index in range(rounds):
            shift = round_index % len(order)
            for name in order[shift:] + order[:shift]:
                ttfts, totals, steady, seconds = paths[name].run(concurrency, per_round)
                all_ttfts, all_totals, all_steady, all_seconds = gathered[name]
                gathered[name] = (
                    all_ttfts + ttfts,
                    all_totals + totals,
                    all_steady + steady,
                    all_seconds + seconds,
                )
        for name, (ttfts, totals, steady, seconds) in gathered.items():
            results[name][concurrency] = (ttfts, totals, steady / seconds)
    return results


def compare(direct: dict, gateway: dict, references: dict[str, dict]) -> dict:
    """Added latency = gateway - direct Session (the same protocol the gateway speaks to the node).
    `references` (a Generate client, the gateway with the aiohttp client) are reported beside."""
    results = {}
    for concurrency in LEVELS:
        (d_ttft, d_total, d_rate), (g_ttft, g_total, g_rate) = direct[concurrency], gateway[concurrency]
        results[concurrency] = {
            "requests": len(d_ttft),
            "direct_ttft_ms": _p50_p99(d_ttft),
            "direct_total_ms": _p50_p99(d_total),
            "gateway_ttft_ms": _p50_p99(g_ttft),
            "gateway_total_ms": _p50_p99(g_total),
            "added_ttft_ms": {q: _p(g_ttft, q) - _p(d_ttft, q) for q in ("p50", "p99")},
            "added_ms": {q: _p(g_total, q) - _p(d_total, q) for q in ("p50", "p99")},
            "gateway_requests_per_s": g_rate,
            "direct_requests_per_s": d_rate,
        }
        for name, reference in references.items():
            r_ttft, r_total, r_rate = reference[concurrency]
            results[concurrency][name] = {
                "ttft_ms": _p50_p99(r_ttft),
                "total_ms": _p50_p99(r_total),
                "requests_per_s": r_rate,
            }
    return results


def _p(values: list[float], q: str) -> float:
    return percentile(values, {"p50": 0.5, "p99": 0.99}[q]) * 1e3


def _p50_p99(values: list[float]) -> dict[str, float]:
    return {q: _p(values, q) for q in ("p50", "p99")}


def _start_gateway(tree: Path, port: int, model: str, node_port: int, pin: list[str]) -> subprocess.Popen:
    """`hybridgw gateway` of the checkout at `tree` (its packages come first on the path)."""
    return subprocess.Popen(
        [
            *pin,
            sys.executable,
            "-m",
            "hybridgw",
            "gateway",
            "--model",
            f"bench={model}",
            "--edge",
            f"echo=127.0.0.1:{node_port}",
            "--port",
            str(port),
            "--edge-queue-bound",
            "1000000",
        ],
        stderr=subprocess.DEVNULL,
        cwd=tree,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--requests", type=int, default=1200, help="per level (a quarter for 1 client)")
    parser.add_argument("--step-ms", type=float, default=5.0, help="the echo node's step (token) interval")
    parser.add_argument("--model", help="GGUF whose tokenizer the gateway uses (default: the demo model)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose gateway is measured beside")
    args = parser.parse_args()
    if args.model is None:
        from formats.model_pull import DEFAULT_MODEL, pull

        args.model = str(pull(DEFAULT_MODEL))
    node_port, gateway_port = free_port(), free_port()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") and os.cpu_count() > 1 else []
    if pin:
        os.sched_setaffinity(0, {1})  # the node: core 1
    node = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "echo_node.py"),
            str(node_port),
            str(args.tokens),
            str(args.step_ms),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    node.stdout.readline()
    gateway = _start_gateway(ROOT, gateway_port, args.model, node_port, pin)
    baseline_port = free_port()
    baseline = (
        _start_gateway(args.baseline, baseline_port, args.model, node_port, pin) if args.baseline else None
    )
    address = f"127.0.0.1:{node_port}"
    null_proxy_port = free_port()
    null_proxy_script = str(ROOT / "benchmarks" / "null_proxy.py")
    null_proxy = subprocess.Popen(
        [*pin, sys.executable, null_proxy_script, str(null_proxy_port), address, str(args.tokens)], cwd=ROOT
    )
    null_proxy_url = f"http://127.0.0.1:{null_proxy_port}"
    url = f"http://127.0.0.1:{gateway_port}"
    try:
        for port in (gateway_port, null_proxy_port, *([baseline_port] if baseline else [])):
            _wait_for(port)
        time.sleep(1.0)
        node_side, gateway_side = (0, 1) if pin else (0, 0)  # each apart from the server it calls
        paths = {
            "direct": ClientProcess("session", address, args.tokens, args.step_ms, node_side),
            "gateway": ClientProcess("gateway", url, args.tokens, args.step_ms, gateway_side),
            "null_proxy": ClientProcess("gateway", null_proxy_url, args.tokens, args.step_ms, gateway_side),
            "generate": ClientProcess("generate", address, args.tokens, args.step_ms, node_side),
            "aiohttp": ClientProcess("aiohttp", url, args.tokens, args.step_ms, gateway_side),
        }
        if baseline is not None:
            baseline_url = f"http://127.0.0.1:{baseline_port}"
            paths["baseline"] = ClientProcess(
                "gateway", baseline_url, args.tokens, args.step_ms, gateway_side
            )
        try:
            measured = measure(paths, args.requests)
        finally:
            for client in paths.values():
                client.close()
        direct, gateway_path = measured.pop("direct"), measured.pop("gateway")
        results = compare(direct, gateway_path, measured)
    finally:
        for process in (gateway, null_proxy, node, *([baseline] if baseline else [])):
            process.terminate()
    print(f"{args.tokens} tokens per streamed request, one every {args.step_ms} ms; gateway on one core")
    header = ("clients", "direct TTFT", "gw TTFT", "added TTFT", "added p50", "added p99", "gw req/s")
    print("{:>8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9}".format(*header))
    for concurrency, row in results.items():
        cells = (
            row["direct_ttft_ms"]["p50"],
            row["gateway_ttft_ms"]["p50"],
            row["added_ttft_ms"]["p50"],
            row["added_ms"]["p50"],
            row["added_ms"]["p99"],
        )
        print(
            f"{concurrency:>8} "
            + " ".join(f"{value:>9.2f}ms" for value in cells)
            + f" {row['gateway_requests_per_s']:>9.0f}"
        )
    print("for reference (p50 TTFT / whole stream, requests per s):")
    labels = {
        "null_proxy": "null proxy (HTTP in, the node's Session out, no gateway work), for the hop's own cost",
        "generate": "one Generate call per request, direct",
        "aiohttp": "aiohttp client, through the gateway",
    }
    if baseline is not None:
        labels["baseline"] = f"the gateway of {args.baseline}, same client as the gateway path"
    for name, label in labels.items():
        print(f"  {label}")
        for concurrency, row in results.items():
            ref = row[name]
            print(
                f"{concurrency:>8} {ref['ttft_ms']['p50']:>9.2f}ms {ref['total_ms']['p50']:>9.2f}ms"
                f" {ref['requests_per_s']:>9.0f}"
            )
    if baseline is not None:
        print("this gateway / the baseline's (TTFT p50, added TTFT p50, requests per s):")
        for concurrency, row in results.items():
            ours, theirs = row["gateway_ttft_ms"]["p50"], row["baseline"]["ttft_ms"]["p50"]
            added = (ours - row["direct_ttft_ms"]["p50"]) / (theirs - row["direct_ttft_ms"]["p50"])
            print(
                f"{concurrency:>8} {ours / theirs:>9.3f} {added:>9.3f}"
                f" {row['gateway_requests_per_s'] / row['baseline']['requests_per_s']:>9.3f}"
            )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps({"tokens": args.tokens, "step_ms": args.step_ms, "results": results}, indent=2)
    )
    print(f"saved {RESULTS}")


if __name__ == "__main__":
    main()

"""What the gateway adds: the same streamed requests to a node directly and through the gateway.

    .venv/bin/python benchmarks/gateway_overhead.py [--tokens 16] [--step-ms 5] [--requests 1200]
        [--baseline TREE] [--short]

`--short`: the CI guard (tests/hybridgw/test_overhead_guard.py, under a minute): 1 and 256 clients,
the gateway and the null proxy only, and an exit status of 1 when the gateway costs more than
MAX_TTFT_RATIO times the null proxy's TTFT p50 at 1 client, or more than MAX_COST_RATIO times its
time per request saturated (its requests/s over the gateway's): ratios of the same run, so a slow
machine does not fail it, a regression of the gateway's own work does.

The gateway writes its privacy ledger (a file in a temporary folder, fsynced: group commit) as it
does by default; a second gateway without a ledger is measured beside (`gateway_no_ledger`), so
the ledger's share of the cost is read apart. LiteLLM's proxy (benchmarks/litellm_proxy.py) is a
path too where it is installed: the anchor the README's claim is a same-run ratio to.

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
import tempfile
import time
from pathlib import Path

import litellm_proxy  # beside this script
import overhead_report  # beside this script
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
SHORT_COUNTS = {1: 64, 256: 1024}  # --short: requests per level (4 per client saturated)
MAX_TTFT_RATIO = 4.0  # the CI guard: gateway TTFT p50 / the null proxy's, 1 client
MAX_COST_RATIO = 6.0  # the CI guard: null proxy requests/s / the gateway's, 256 clients
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


def measure(paths: dict[str, ClientProcess], counts: dict[int, int]) -> dict[str, dict]:
    """Every level's requests in up to ROUNDS rounds (each at least 4 requests per client), the
    paths taking turns in a rotating order, so a machine that drifts during the run drifts under
    every path alike.
    -> {path: {clients: (ttfts, totals, requests per second while every client was sending)}}."""
    results: dict[str, dict] = {name: {} for name in paths}
    for concurrency, count in counts.items():
        rounds = max(1, min(ROUNDS, count // (4 * concurrency)))
        per_round = count // rounds
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
    for concurrency in direct:
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


def _start_gateway(
    tree: Path, port: int, model: str, node_port: int, pin: list[str], ledger: str = ""
) -> subprocess.Popen:
    """`hybridgw gateway` of the checkout at `tree` (its packages come first on the path), its
    privacy ledger at `ledger` ('': none)."""
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
            "--privacy-ledger",
            ledger,
        ],
        stderr=subprocess.DEVNULL,
        cwd=tree,
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--requests", type=int, default=1200, help="per level (a quarter for 1 client)")
    parser.add_argument("--step-ms", type=float, default=5.0, help="the echo node's step (token) interval")
    parser.add_argument("--model", help="GGUF whose tokenizer the gateway uses (default: the demo model)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose gateway is measured beside")
    parser.add_argument("--short", action="store_true", help="the CI guard: exit 1 past the ratios")
    args = parser.parse_args()
    if args.model is None:
        from formats.model_pull import DEFAULT_MODEL, pull

        args.model = str(pull(DEFAULT_MODEL))
    return args


def _start_servers(args, folder: str, pin: list[str]) -> tuple[list[subprocess.Popen], dict[str, str]]:
    """The echo node (core 1), the gateways, null proxy and LiteLLM (core 0).
    -> (processes, {path: its URL, "node": the node's address})."""
    node_port = free_port()
    command = [sys.executable, str(ROOT / "benchmarks" / "echo_node.py"), str(node_port)]
    node = subprocess.Popen(
        [*command, str(args.tokens), str(args.step_ms)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    node.stdout.readline()
    address = f"127.0.0.1:{node_port}"
    processes, urls, ports = [node], {"node": address}, {}

    def gateway(name: str, tree: Path, ledger: str) -> None:
        ports[name] = free_port()
        processes.append(_start_gateway(tree, ports[name], args.model, node_port, pin, ledger))

    gateway("gateway", ROOT, os.path.join(folder, "ledger.jsonl"))
    ports["null_proxy"] = free_port()
    null_proxy = [sys.executable, str(ROOT / "benchmarks" / "null_proxy.py"), str(ports["null_proxy"])]
    processes.append(subprocess.Popen([*pin, *null_proxy, address, str(args.tokens)], cwd=ROOT))
    if not args.short:
        gateway("gateway_no_ledger", ROOT, "")
    if args.baseline:
        gateway("baseline", args.baseline, os.path.join(folder, "baseline-ledger.jsonl"))
    for name, port in ports.items():
        _wait_for(port)
        urls[name] = f"http://127.0.0.1:{port}"
    if not args.short and litellm_proxy.installed():
        upstream_port, port = free_port(), free_port()
        processes.append(litellm_proxy.start_upstream(upstream_port, address, args.tokens, []))
        _wait_for(upstream_port)
        processes.append(litellm_proxy.start(port, upstream_port, pin))
        urls["litellm"] = f"http://127.0.0.1:{port}"
    return processes, urls


def _paths(args, urls: dict[str, str], pin: list[str]) -> dict[str, ClientProcess]:
    node_side, gateway_side = (0, 1) if pin else (0, 0)  # each apart from the server it calls
    address = urls["node"]
    paths = {"direct": ClientProcess("session", address, args.tokens, args.step_ms, node_side)}
    for name, url in urls.items():
        if name != "node":
            paths[name] = ClientProcess("gateway", url, args.tokens, args.step_ms, gateway_side)
    if not args.short:
        paths["generate"] = ClientProcess("generate", address, args.tokens, args.step_ms, node_side)
        paths["aiohttp"] = ClientProcess("aiohttp", urls["gateway"], args.tokens, args.step_ms, gateway_side)
    return paths


def main() -> None:
    args = _arguments()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") and os.cpu_count() > 1 else []
    if pin:
        os.sched_setaffinity(0, {1})  # the node: core 1
    folder = tempfile.mkdtemp(prefix="gateway-overhead-")
    processes, urls = [], {}
    try:
        processes, urls = _start_servers(args, folder, pin)
        time.sleep(1.0)
        paths = _paths(args, urls, pin)
        try:
            counts = SHORT_COUNTS if args.short else {c: _count(args.requests, c) for c in LEVELS}
            measured = measure(paths, counts)
        finally:
            for client in paths.values():
                client.close()
        direct, gateway_path = measured.pop("direct"), measured.pop("gateway")
        results = compare(direct, gateway_path, measured)
    finally:
        for process in processes:
            process.terminate()
        shutil.rmtree(folder, ignore_errors=True)
    overhead_report.print_results(results, args)
    if args.short:
        sys.exit(overhead_report.guard(results, MAX_TTFT_RATIO, MAX_COST_RATIO))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps({"tokens": args.tokens, "step_ms": args.step_ms, "results": results}, indent=2)
    )
    print(f"saved {RESULTS}")


if __name__ == "__main__":
    main()

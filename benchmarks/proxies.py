"""One engine, three paths to it: directly, through LiteLLM's proxy (its `openai/` provider) and
through `hybridgw gateway` (one `[[upstreams]]` node of kind edge), at 1, 16 and 64 clients:
TTFT p50/p99, requests/s and errors (any answer but a 200 that ends with [DONE]). Streamed
16-token chats, a sequential warm-up per path, then each client sends its next request when its
last one ends.

The engine is llama-server (`-np 16`, built by benchmarks/setup_llamaserver.sh) when it is there,
else a hybridgw gateway in front of a 16-slot `hybridgw edge` node, closing idle connections
after 5 s as llama-server does. Every path runs in the same run on the same machine.

    python benchmarks/proxies.py [--requests-per-client 4] [--clients 1,16,64]
"""

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import aiohttp

from formats.model_pull import DEFAULT_MODEL, model_path

ROOT = Path(__file__).resolve().parents[1]
HOME = Path(os.environ.get("HYBRIDGW_HOME", Path.home() / ".cache" / "hybridgw"))
LLAMA_SERVER = HOME / "llama-server" / "build" / "bin" / "llama-server"
MESSAGES = [{"role": "user", "content": "Write a short poem about the sea."}]
MAX_TOKENS, WARMUP = 16, 8


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(command: list[str], ready_url: str, what: str, env: dict | None = None) -> subprocess.Popen:
    """The process, once `ready_url` answers 200 (its output in a log file beside the results)."""
    log = open(Path(tempfile.gettempdir()) / f"proxies-{what}.log", "w")  # noqa: SIM115 - lives with it
    environ = {**os.environ, **(env or {})}
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=environ)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{what} exited: see {log.name}"
        try:
            with urllib.request.urlopen(ready_url, timeout=2) as reply:
                if reply.status == 200:
                    return process
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{what} did not start: see {log.name}")


def start_engine(gguf: str, processes: list) -> tuple[str, str, str]:
    """-> (its /v1 URL, the model name it answers to, what it is)."""
    port = free_port()
    if LLAMA_SERVER.exists():
        command = [str(LLAMA_SERVER), "-m", gguf, "-np", "16", "-c", str(16 * 1024), "--port", str(port)]
        processes.append(start(command, f"http://127.0.0.1:{port}/health", "llama-server"))
        return f"http://127.0.0.1:{port}/v1", "demo", "llama-server -np 16"
    edge_port = free_port()
    edge = [sys.executable, "-m", "hybridgw", "edge", "--model", gguf, "--port", str(edge_port)]
    edge += ["--slots", "16", "--ctx-size", str(16 * 1024), "--threads", "2", "--metrics-port", "0"]
    processes.append(subprocess.Popen(edge, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT))
    gateway = [sys.executable, "-m", "hybridgw", "gateway", "--model", f"demo={gguf}"]
    gateway += ["--edge", f"e=127.0.0.1:{edge_port}", "--port", str(port), "--keepalive-s", "5"]
    gateway += ["--edge-queue-bound", "256", "--privacy-ledger", ""]
    processes.append(start(gateway, f"http://127.0.0.1:{port}/health/ready", "engine-gateway"))
    return f"http://127.0.0.1:{port}/v1", "demo", "hybridgw gateway + edge (16 slots), keep-alive 5 s"


def start_litellm(engine_url: str, model: str, processes: list) -> str | None:
    """LiteLLM's proxy in front of the engine (None when its proxy is not installed)."""
    binary = shutil.which("litellm") or str(Path(sys.executable).parent / "litellm")
    if not Path(binary).exists():
        return None
    config = Path(tempfile.gettempdir()) / "proxies-litellm.yaml"
    config.write_text(
        "model_list:\n  - model_name: demo\n    litellm_params:\n"
        f"      model: openai/{model}\n      api_base: {engine_url}\n      api_key: none\n"
    )
    port = free_port()
    command = [binary, "--config", str(config), "--port", str(port), "--host", "127.0.0.1"]
    open_proxy = {"LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true"}  # as the others: no key
    processes.append(start(command, f"http://127.0.0.1:{port}/health/liveliness", "litellm", open_proxy))
    return f"http://127.0.0.1:{port}/v1"


def start_hybridgw(engine_url: str, model: str, gguf: str, processes: list) -> str:
    port = free_port()
    config = Path(tempfile.gettempdir()) / "proxies-hybridgw.toml"
    config.write_text(
        f'[gateway]\nport = {port}\n[privacy]\nledger = ""\n'
        f'[[models]]\nname = "demo"\ngguf = "{gguf}"\n'
        f'[[upstreams]]\nid = "engine"\nurl = "{engine_url}"\nkind = "edge"\n'
        f'max_concurrency = 64\nmodels = {{ demo = "{model}" }}\n'
    )
    command = [sys.executable, "-m", "hybridgw", "gateway", "--config", str(config)]
    processes.append(start(command, f"http://127.0.0.1:{port}/health/ready", "hybridgw"))
    return f"http://127.0.0.1:{port}/v1"


async def one_request(session: aiohttp.ClientSession, url: str) -> tuple[float | None, str | None]:
    """-> (TTFT seconds, None) or (None, what went wrong)."""
    body = {"model": "demo", "messages": MESSAGES, "max_tokens": MAX_TOKENS, "stream": True}
    started = time.perf_counter()
    ttft = None
    try:
        async with session.post(f"{url}/chat/completions", json=body) as reply:
            if reply.status != 200:
                return None, f"{reply.status} {(await reply.text())[:120]}"
            async for line in reply.content:
                if line.startswith(b"data: ") and ttft is None and b'"content"' in line:
                    ttft = time.perf_counter() - started
                if line.strip() == b"data: [DONE]":
                    return ttft or time.perf_counter() - started, None
        return None, "stream ended without [DONE]"
    except (aiohttp.ClientError, TimeoutError) as error:
        return None, type(error).__name__


async def measure(url: str, clients: int, per_client: int) -> dict:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for _ in range(WARMUP):
            await one_request(session, url)
        results: list[tuple[float | None, str | None]] = []

        async def client() -> None:
            for _ in range(per_client):
                results.append(await one_request(session, url))

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        seconds = time.perf_counter() - started
    ttfts = sorted(t for t, error in results if error is None)
    errors = [error for _, error in results if error is not None]
    pick = lambda q: round(1000 * ttfts[min(len(ttfts) - 1, int(q * len(ttfts)))], 1) if ttfts else None  # noqa: E731
    return {
        "clients": clients,
        "requests": len(results),
        "ok": len(ttfts),
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:5],
        "ttft_p50_ms": pick(0.5),
        "ttft_p99_ms": pick(0.99),
        "requests_per_s": round(len(ttfts) / seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="1,16,64")
    parser.add_argument("--requests-per-client", type=int, default=4)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: its servers stop too
    gguf = str(model_path(DEFAULT_MODEL))
    processes: list[subprocess.Popen] = []
    rows = []
    try:
        engine_url, model, engine = start_engine(gguf, processes)
        paths = {"direct": engine_url, "litellm": start_litellm(engine_url, model, processes)}
        paths["hybridgw"] = start_hybridgw(engine_url, model, gguf, processes)
        for clients in (int(c) for c in args.clients.split(",")):
            per_client = max(args.requests_per_client, 32 // clients)
            for name, url in paths.items():
                if url is None:
                    continue
                row = {"path": name, **asyncio.run(measure(url, clients, per_client))}
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=30)
    report(rows, engine)


def report(rows: list[dict], engine: str) -> None:
    print(f"\nengine: {engine}; {os.cpu_count()} CPUs; streamed {MAX_TOKENS}-token chats")
    print(f"{'path':10} {'clients':>7} {'ok/requests':>12} {'TTFT p50':>9} {'p99':>9} {'req/s':>7}")
    for r in rows:
        ok = f"{r['ok']}/{r['requests']}"
        print(
            f"{r['path']:10} {r['clients']:>7} {ok:>12} {r['ttft_p50_ms']!s:>9} "
            f"{r['ttft_p99_ms']!s:>9} {r['requests_per_s']:>7}"
        )
    out = ROOT / "benchmarks" / "results" / "proxies.json"
    out.write_text(json.dumps({"engine": engine, "cpus": os.cpu_count(), "rows": rows}, indent=1) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()

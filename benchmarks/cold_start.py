"""First start against a warm one: time to ready and to the first token, in fresh processes.

For `hybridgw up` (gateway + edge node + cloud engine; ready = its "hybridgw is up" banner, first
token = the first streamed token of a chat sent then), `hybridgw run` (ready = its load time,
first token as it reports it) and llama.cpp's llama-cli where benchmarks/setup_llamacpp.sh built
it, on the demo model and on a second file (--model, any supported GGUF; default: the demo model
requantized to Q4_K_M by our quantizer, other weight types and so other kernels). Each round
starts with an empty numba cache (a directory of its own: NUMBA_CACHE_DIR) and then starts again
on the cache it filled; medians of --rounds. Reports how many kernels (numba index files) and
compiled signatures a cold start wrote.

    .venv/bin/python benchmarks/cold_start.py [--rounds 3] [--model FILE.gguf]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HYBRIDGW = [sys.executable, "-m", "hybridgw"]
LLAMA_CLI = ROOT / "benchmarks" / "llama.cpp" / "build" / "bin" / "llama-cli"


def _environment(cache: Path) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONUNBUFFERED": "1"}


def time_run(model: str, cache: Path) -> tuple[float, float]:
    """`hybridgw run`: (seconds to loaded, seconds to first token) as it reports them."""
    done = subprocess.run(
        [*HYBRIDGW, "run", "-m", model, "-p", "Hello", "-n", "4", "--seed", "1", "--verbose"],
        capture_output=True,
        text=True,
        env=_environment(cache),
        timeout=900,
        check=True,
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("load:"))
    load_s = float(line.split("load: ")[1].split(" ms")[0]) / 1000
    first_s = float(line.split("first token after ")[1].split(" s")[0])
    return load_s, first_s


def _first_token(url: str) -> None:
    body = {
        "model": "smollm2-135m",
        "messages": [{"role": "user", "content": "Hello"}],
        "max_tokens": 4,
        "stream": True,
    }
    headers = {"Content-Type": "application/json", "X-Hybridgw-Privacy": "private"}  # the edge node
    request = urllib.request.Request(f"{url}/v1/chat/completions", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=600) as response:
        for line in response:
            if line.startswith(b"data: ") and b'"content"' in line:
                return


def time_up(model: str, cache: Path) -> tuple[float, float]:
    """`hybridgw up`: (seconds to its banner, seconds to a first streamed token after it)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [*HYBRIDGW, "up", "--port", "0", "--model", f"smollm2-135m={model}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_environment(cache),
    )
    try:
        url = None
        for line in process.stdout:
            if "hybridgw is up:" in line:
                url = line.split("hybridgw is up: ")[1].split("/v1")[0]
                break
        if url is None:
            raise RuntimeError("hybridgw up did not come up")
        ready_s = time.perf_counter() - started
        threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
        _first_token(url)
        return ready_s, time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(timeout=60)


def time_llama_cli(model: str) -> tuple[float, float] | None:
    if not LLAMA_CLI.exists():
        return None
    started = time.perf_counter()
    subprocess.run(
        [str(LLAMA_CLI), "-m", model, "-p", "Hello", "-n", "1", "-no-cnv", "--no-warmup"],
        capture_output=True,
        timeout=300,
        check=True,
    )
    elapsed = time.perf_counter() - started
    return elapsed, elapsed


def kernel_counts(cache: Path) -> tuple[int, int]:
    """(functions, compiled signatures) numba's cache holds."""
    return len(list(cache.rglob("*.nbi"))), len(list(cache.rglob("*.nbc")))


def second_model(demo: str, directory: Path) -> str:
    """The demo model requantized to Q4_K_M (Q4_K, Q6_K rows): other weight types, other kernels."""
    out = directory / "demo-Q4_K_M.gguf"
    if not out.exists():
        subprocess.run(
            [*HYBRIDGW, "quantize", demo, str(out), "--type", "q4_k_m"], check=True, capture_output=True
        )
    return str(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", help="the second file (default: the demo model as Q4_K_M)")
    parser.add_argument("--only", choices=("run", "up"), help="measure one command")
    parser.add_argument("--demo-only", action="store_true", help="no second file")
    args = parser.parse_args()
    from formats.model_pull import DEFAULT_MODEL, model_path

    demo = str(model_path(DEFAULT_MODEL))
    work = Path(tempfile.mkdtemp(prefix="cold-start-"))
    files = {"demo": demo}
    if not args.demo_only:
        files["second"] = args.model or second_model(demo, work)
    commands = {"run": time_run, "up": time_up}
    if args.only:
        commands = {args.only: commands[args.only]}
    rows = []
    for label, model in files.items():
        for name, measure in commands.items():
            cold, warm, counts = [], [], (0, 0)
            for _ in range(args.rounds):
                cache = work / f"numba-{label}-{name}"
                shutil.rmtree(cache, ignore_errors=True)
                cold.append(measure(model, cache))
                counts = kernel_counts(cache)
                warm.append(measure(model, cache))
            rows.append((label, name, cold, warm, counts))
            _print_row(rows[-1])
        reference = time_llama_cli(model)
        if reference:
            print(f"| {label} | llama-cli | {reference[0]:.2f} s | {reference[1]:.2f} s | — | — | — |")
    shutil.rmtree(work, ignore_errors=True)


def _print_row(row) -> None:
    label, name, cold, warm, (functions, signatures) = row
    ready_cold, first_cold = (statistics.median(x[i] for x in cold) for i in (0, 1))
    ready_warm, first_warm = (statistics.median(x[i] for x in warm) for i in (0, 1))
    print(
        f"| {label} | hybridgw {name} | {ready_cold:.1f} s | {first_cold:.1f} s | "
        f"{ready_warm:.2f} s | {first_warm:.2f} s | {functions} kernels, {signatures} signatures |",
        flush=True,
    )


if __name__ == "__main__":
    main()

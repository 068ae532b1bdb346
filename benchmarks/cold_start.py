"""First start against a warm one: time to ready and to the first token, in fresh processes.

For `hybridgw up` (gateway + edge node + cloud engine; ready = its "hybridgw is up" banner, first
token = the first streamed token of a chat sent then), `hybridgw run` (ready = its load time,
first token as it reports it) and llama.cpp's llama-cli where benchmarks/setup_llamacpp.sh built
it, on the demo model, on the demo model requantized to Q4_K_M by our quantizer (other weight
types, so other kernels) or any supported GGUF given as --model, and on a second architecture: a
Gemma 3 270M-shaped file (benchmarks/gemma3_shaped.py: sliding and global layers, post-norms,
head norms, GELU, a Q4_K/Q6_K mix). Each round
starts with an empty numba cache (a directory of its own: NUMBA_CACHE_DIR) and then starts again
on the cache it filled; medians of --rounds. Reports how many kernels (numba index files) and
compiled signatures a cold start wrote. Every row says the host's ISA level and the one the
kernels were compiled for: `--isa avx2` compiles them for an AVX2-only CPU (Zen 3, as
benchmarks/isa_targets.py), `--isa both` measures both levels, native first, in every round.

    .venv/bin/python benchmarks/cold_start.py [--rounds 3] [--model FILE.gguf] [--files demo,second,gemma3]
        [--isa native|avx2|both]
"""

import argparse
import json
import os
import shutil
import socket
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
# built by benchmarks/setup_llamaserver.sh (both binaries)
LLAMA_BUILD = Path(os.environ.get("HYBRIDGW_HOME", Path.home() / ".cache" / "hybridgw")) / "llama-server"
LLAMA_CLI = LLAMA_BUILD / "build" / "bin" / "llama-cli"
LLAMA_SERVER = LLAMA_BUILD / "build" / "bin" / "llama-server"


def _environment(cache: Path, level: str = "native") -> dict:
    from isa_targets import worker_environment  # beside this script

    return {**worker_environment(level, "ours"), "NUMBA_CACHE_DIR": str(cache), "PYTHONUNBUFFERED": "1"}


def isa_label(level: str) -> str:
    """`host <level>, kernels for <level> (<cpu>)`: where the row ran and what it compiled for."""
    from isa_targets import AVX2_TARGET

    from edge.kernels.isa import isa_level, target_cpu, target_features

    host = isa_level(target_features())
    if level == "avx2":
        features = frozenset(f[1:] for f in AVX2_TARGET["NUMBA_CPU_FEATURES"].split(","))
        return f"host {host}, kernels for {isa_level(features)} ({AVX2_TARGET['NUMBA_CPU_NAME']})"
    return f"host {host}, kernels for {host} ({target_cpu()})"


def time_run(model: str, cache: Path, level: str = "native") -> tuple[float, float]:
    """`hybridgw run`: (seconds to loaded, seconds to first token) as it reports them."""
    done = subprocess.run(
        [*HYBRIDGW, "run", "-m", model, "-p", "Hello", "-n", "4", "--seed", "1", "--verbose"],
        capture_output=True,
        text=True,
        env=_environment(cache, level),
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
            if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):  # a token's text (not the role chunk)
                return


def time_up(model: str, cache: Path, level: str = "native") -> tuple[float, float]:
    """`hybridgw up`: (seconds to its banner, seconds to a first streamed token after it)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [*HYBRIDGW, "up", "--port", "0", "--model", f"smollm2-135m={model}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_environment(cache, level),
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
    """llama.cpp's llama-cli, one token: (seconds to its exit, the same), or None if not built."""
    if not LLAMA_CLI.exists():
        return None
    started = time.perf_counter()
    single_turn = ["-p", "Hello", "-n", "1", "-st", "--simple-io", "--no-warmup", "-t", "2"]
    done = subprocess.run(
        [str(LLAMA_CLI), "-m", model, *single_turn],
        capture_output=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:  # a build whose llama-cli takes other flags: no row, said why
        print(f"llama-cli failed: {done.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
        return None
    elapsed = time.perf_counter() - started
    return elapsed, elapsed


def time_llama_server(model: str) -> tuple[float, float] | None:
    """llama.cpp's llama-server: (seconds to /health answering 200, seconds to a first streamed
    token of a chat sent then), or None if benchmarks/setup_llamaserver.sh did not build it."""
    if not LLAMA_SERVER.exists():
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    command = [str(LLAMA_SERVER), "-m", model, "--port", str(port), "-t", "2", "-np", "8", "-c", "8192"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:  # not listening yet, or 503 while it loads
                time.sleep(0.01)
        ready_s = time.perf_counter() - started
        _first_token(url)
        return ready_s, time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(timeout=60)


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
    parser.add_argument("--files", default="demo,second,gemma3", help="which files, comma-separated")
    parser.add_argument("--isa", choices=("native", "avx2", "both"), default="native", help="kernels for")
    args = parser.parse_args()
    from formats.model_pull import DEFAULT_MODEL, model_path

    demo = str(model_path(DEFAULT_MODEL))
    work = Path(tempfile.mkdtemp(prefix="cold-start-"))
    chosen = args.files.split(",")
    files = {"demo": demo} if "demo" in chosen else {}
    if "second" in chosen:
        files["second"] = args.model or second_model(demo, work)
    if "gemma3" in chosen:
        from gemma3_shaped import gemma3_shaped_file  # beside this script

        files["gemma3"] = str(gemma3_shaped_file(work))
    commands = {"run": time_run, "up": time_up}
    if args.only:
        commands = {args.only: commands[args.only]}
    levels = ("native", "avx2") if args.isa == "both" else (args.isa,)
    rows = []
    for label, model in files.items():
        for name, measure in commands.items():
            for level in levels:
                rows.append(_measure_row((label, name, level), measure, model, work, args.rounds))
                _print_row(rows[-1])
        for name, measure in (("llama-cli", time_llama_cli), ("llama-server", time_llama_server)):
            reference = measure(model)
            if reference:
                ready, first = reference
                host = isa_label("native").split(",")[0]
                print(
                    f"| {label} | llama.cpp {name} | {ready:.2f} s / {first:.2f} s | (no compile) | — "
                    f"| {host} |"
                )
    shutil.rmtree(work, ignore_errors=True)


def _measure_row(what: tuple[str, str, str], measure, model: str, work: Path, rounds: int) -> tuple:
    """`rounds` of a cold start (an empty cache) then a warm one on the cache it filled."""
    label, name, level = what
    cold, warm, counts = [], [], (0, 0)
    for _ in range(rounds):
        cache = work / f"numba-{label}-{name}-{level}"
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(measure(model, cache, level))
        counts = kernel_counts(cache)
        warm.append(measure(model, cache, level))
    return label, name, cold, warm, counts, isa_label(level)


def _print_row(row) -> None:
    label, name, cold, warm, (functions, signatures), isa = row
    ready_cold, first_cold = (statistics.median(x[i] for x in cold) for i in (0, 1))
    ready_warm, first_warm = (statistics.median(x[i] for x in warm) for i in (0, 1))
    print(
        f"| {label} | hybridgw {name} | {ready_cold:.1f} s | {first_cold:.1f} s | "
        f"{ready_warm:.2f} s | {first_warm:.2f} s | {functions} kernels, {signatures} signatures | {isa} |",
        flush=True,
    )


if __name__ == "__main__":
    main()

"""Routing under load, in one run on one machine: the same seeded workloads through `hybridgw up`
with the router ("predicted") and with each static policy ([routing] profile), and through
llama.cpp's llama-server alone (benchmarks/setup_llamaserver.sh builds it; skipped when absent).
Existing engines as nodes: `hybridgw gateway` in front of llama-server (an on-prem [[upstreams]]
node) against llama-server alone, `hybridgw up` with llama-server as a third node, and, with
`--vllm-python` (a Python that has vLLM's CPU build), vLLM alone and behind the gateway.

Rounds alternate the order of the systems; medians over rounds are reported: TTFT p99, output
tokens/s, SLO attainment, failed requests and the share of private requests kept on-prem (must
be 100%). TTFT p99 is over the answered requests only: a policy that sheds requests (429 from a
full queue) has its p99 over the rest, so it is compared by its failures and SLO attainment (which
counts a failed request as missed), not by that p99. Writes
benchmarks/results/routing.json, a plot per workload under docs/img/, and the routing section of
docs/benchmarks.md (between its routing markers).

    .venv/bin/python benchmarks/routing.py [--rounds 3] [--workloads burst-chat,mixed]
"""

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from formats.model_pull import DEFAULT_MODEL, model_path
from hybridgw.bench.client import RunSettings, run_workload
from hybridgw.bench.report import summarize
from hybridgw.bench.workloads import load_workload
from hybridgw.up_command import MODEL_NAME

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("predicted", "all-edge", "all-cloud", "round-robin", "least-busy")
FIGURES = ("ttft_p99_ms", "output_tok_s", "slo_attainment", "private_on_prem", "failed")


class System:
    """A server to benchmark: started, waited for, stopped."""

    def __init__(
        self,
        name: str,
        command: list[str],
        port: int,
        health: str,
        model: str,
        behind: "System | None" = None,
        env: dict[str, str] | None = None,
    ):
        self.name, self.command, self.port, self.health, self.model = name, command, port, health, model
        self.behind = behind  # the server this one fronts: started before it, stopped after it
        self.env = env
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        if self.behind is not None:
            self.behind.start()
        log = open(ROOT / "benchmarks" / "results" / f"routing-{self.name}.log", "w")  # noqa: SIM115
        env = {**os.environ, **self.env} if self.env else None
        self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited while starting (see its log)")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{self.health}", timeout=2):
                    return
            except OSError:
                time.sleep(1)
        raise RuntimeError(f"{self.name} did not become ready")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        if self.behind is not None:
            self.behind.stop()


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


HYBRIDGW = str(ROOT / ".venv/bin/hybridgw")


def systems(
    llama_server: str | None, vllm_python: str | None, config_dir: Path, slo: tuple[float, float]
) -> list[System]:
    """`slo`: (TTFT, TPOT) in ms, the SLO the run measures; the gateways are told it as their
    default latency targets (only the router's "predicted" policy uses them)."""
    found = []
    targets = f"ttft_target_ms = {slo[0]}\ntpot_target_ms = {slo[1]}\n"
    for policy in POLICIES:
        config = config_dir / f"{policy}.toml"
        config.write_text(f'[routing]\nprofile = "{policy}"\n{targets}')
        found.append(_up(f"hybridgw-{policy}", config))
    config = config_dir / "edge-only.toml"
    config.write_text("")
    found.append(_up("hybridgw-edge-only", config, "--no-cloud"))  # the edge node on every core
    if llama_server:
        found.append(llama_server_system(llama_server))
        found.append(fronted("hybridgw→llama-server", llama_server_system(llama_server), config_dir))
        config = config_dir / "up-llama-server.toml"
        engine = llama_server_system(llama_server)
        config.write_text(_upstream_toml("llama-server", engine))
        found.append(_up("hybridgw-up+llama-server", config, behind=engine))
    if vllm_python:
        found.append(vllm_system(vllm_python, config_dir))
        found.append(fronted("hybridgw→vllm", vllm_system(vllm_python, config_dir), config_dir))
    return found


def _up(name: str, config: Path, *flags: str, behind: System | None = None) -> System:
    port = free_port()
    command = [HYBRIDGW, "up", "--config", str(config), "--port", str(port), *flags]
    return System(name, command, port, "/health/ready", MODEL_NAME, behind)


def llama_server_system(binary: str) -> System:
    port = free_port()
    command = [binary, "-m", str(model_path(DEFAULT_MODEL)), "-np", "8", "-c", "16384", "--metrics"]
    command += ["-t", str(os.cpu_count() or 1), "--port", str(port), "--host", "127.0.0.1"]
    return System("llama-server", command, port, "/health", "smollm2")


def vllm_system(python: str, config_dir: Path) -> System:
    """vLLM's OpenAI server on the demo model, converted to a Hugging Face checkpoint."""
    checkpoint = config_dir / "smollm2-hf"
    if not checkpoint.exists():
        convert = [
            HYBRIDGW,
            "convert",
            str(model_path(DEFAULT_MODEL)),
            str(checkpoint),
            "--to",
            "safetensors",
        ]
        subprocess.run(convert, check=True)
    port = free_port()
    command = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(checkpoint)]
    command += ["--served-model-name", "smollm2", "--port", str(port), "--host", "127.0.0.1"]
    command += ["--dtype", "bfloat16", "--max-model-len", "8192"]
    return System("vllm", command, port, "/health", "smollm2", env={"VLLM_CPU_KVCACHE_SPACE": "2"})


def _upstream_toml(node_id: str, engine: System) -> str:
    """An on-prem [[upstreams]] entry for the engine (load from its Prometheus metrics)."""
    base = engine.url.removesuffix("/v1")
    return (
        f'[[upstreams]]\nid = "{node_id}"\nurl = "{engine.url}"\nkind = "edge"\n'
        f'models = {{ {MODEL_NAME} = "{engine.model}" }}\nmetrics_url = "{base}/metrics"\n'
    )


def fronted(name: str, engine: System, config_dir: Path) -> System:
    """`hybridgw gateway` with the engine as its only node."""
    port = free_port()
    config = config_dir / f"{engine.name}-front.toml"
    model = f'[[models]]\nname = "{MODEL_NAME}"\ngguf = "{model_path(DEFAULT_MODEL)}"\n\n'
    config.write_text(f"[gateway]\nport = {port}\n\n{model}{_upstream_toml(engine.name, engine)}")
    command = [HYBRIDGW, "gateway", "--config", str(config)]
    return System(name, command, port, "/health/ready", MODEL_NAME, behind=engine)


def measure_summary(
    system: System, workload: str, seed: int, num_requests: int | None, slo: tuple = (None, None)
) -> dict:
    """One run of the workload against the started system: bench serve's summary."""
    requests = load_workload(workload, seed, num_requests)
    settings = RunSettings(system.url, system.model, seed=seed)
    results, wall = asyncio.run(run_workload(requests, settings))
    return summarize(results, wall, *slo)


def measure(system: System, workload: str, args: argparse.Namespace) -> dict:
    slo = (args.slo_ttft_ms, args.slo_tpot_ms)
    summary = measure_summary(system, workload, args.seed, args.num_requests, slo)
    return {
        "ttft_p99_ms": summary["ttft_ms"]["p99"],
        "output_tok_s": summary["output_throughput"],
        "slo_attainment": summary["slo_attainment"],
        "private_on_prem": summary["private_on_prem"],
        "tier_share": summary["tier_share"],
        "failed": summary["failed"],
    }


def run_rounds(args: argparse.Namespace, found: list[System]) -> dict:
    """-> {workload: {system: [one result per round]}}"""
    runs: dict = {w: {s.name: [] for s in found} for w in args.workloads}
    for round_index in range(args.rounds):
        order = found[round_index % len(found) :] + found[: round_index % len(found)]
        for system in order:
            print(f"round {round_index + 1}/{args.rounds}: {system.name}", file=sys.stderr)
            system.start()
            try:
                for workload in args.workloads:
                    runs[workload][system.name].append(measure(system, workload, args))
            finally:
                system.stop()
    return runs


def medians(runs: dict) -> dict:
    table = {}
    for workload, by_system in runs.items():
        table[workload] = {}
        for system, rounds in by_system.items():
            row = {}
            for figure in FIGURES:
                values = [r[figure] for r in rounds if r[figure] is not None]
                row[figure] = statistics.median(values) if values else None
            row["tier_share"] = rounds[-1]["tier_share"] if rounds else {}
            table[workload][system] = row
    return table


def markdown(table: dict, args: argparse.Namespace) -> str:
    lines = [
        f"Medians of {args.rounds} round(s), seed {args.seed}, SLO TTFT {args.slo_ttft_ms:.0f} ms / TPOT "
        f"{args.slo_tpot_ms:.0f} ms; `benchmarks/routing.py`.",
        "",
    ]
    for workload, by_system in table.items():
        reference = by_system.get("llama-server")
        lines += [
            f"**{workload}**",
            "",
            "| system | TTFT p99 (ms) | vs llama-server | output tok/s | "
            "vs llama-server | SLO met | failed | private on-prem | where |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for system, row in by_system.items():
            ttft_ratio = _ratio(row["ttft_p99_ms"], reference and reference["ttft_p99_ms"])
            speed_ratio = _ratio(row["output_tok_s"], reference and reference["output_tok_s"])
            private = "—" if row["private_on_prem"] is None else f"{row['private_on_prem']:.0%}"
            where = ", ".join(f"{k} {v:.0%}" for k, v in row["tier_share"].items())
            lines.append(
                f"| {system} | {row['ttft_p99_ms']:.0f} | {ttft_ratio} | {row['output_tok_s']:.1f} | "
                f"{speed_ratio} | {row['slo_attainment']:.0%} | {row['failed']:.0f} | {private} | {where} |"
            )
        lines.append("")
        lines.append(f"![{workload}](img/{args.section}-{workload}.png)")
        lines.append("")
    return "\n".join(lines)


def _ratio(value, reference) -> str:
    return f"{value / reference:.2f}×" if reference else "—"


def plot(table: dict, section: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    (ROOT / "docs" / "img").mkdir(parents=True, exist_ok=True)
    for workload, by_system in table.items():
        names = list(by_system)
        figure, (ttft, speed) = pyplot.subplots(1, 2, figsize=(12, 4))
        ttft.barh(names, [by_system[n]["ttft_p99_ms"] / 1000 for n in names])
        ttft.set(xlabel="TTFT p99 (s)", title=f"{workload}: time to first token, p99")
        speed.barh(names, [by_system[n]["output_tok_s"] for n in names])
        speed.set(xlabel="output tokens/s", title=f"{workload}: throughput")
        figure.tight_layout()
        figure.savefig(ROOT / "docs" / "img" / f"{section}-{workload}.png", dpi=80)
        pyplot.close(figure)


TITLES = {
    "routing": "Routing under load",
    "routing-free-slot": "Routing under load: a free slot before a queue",
    "routing-engine-first": "Routing under load: the engine beside the edge first, router against all-cloud",
    "routing-slo-scheduling": "Routing under load: the cloud engine schedules by the requests' targets",
    "routing-edge-guard": (
        "Routing under load: edge slots guarded for private requests, "
        "prefill rates measured as under load (2026-12-03, AVX-512 host)"
    ),
    "routing-free-slot-static": "Routing under load: the free-slot router against the other static policies",
    "upstreams": "Existing engines behind the gateway",
    "upstreams-vllm": "vLLM behind the gateway",
    "edge-batched": "The edge node alone against llama-server (8 slots, batched row kernels)",
    "routing-bf16-cloud": "Routing under load with the cloud engine's CPU kernels in bfloat16",
    "routing-all-edge": "Routing under load: all-edge, public requests using the whole edge queue when alone",
    "routing-shared-prefix": "Routing under load after the shared-prefix fixes",
    "routing-one-core-each": "Routing under load with each tier on its own core (AVX2 host, float32 cloud)",
    "routing-one-core-each-2": "The same, second run: the router with the overdue-request fixes",
    "routing-one-core-each-3": "The router alone, third run: a slot wait is not scaled twice",
    "routing-edge-by-prediction": (
        "Routing under load: a full edge judged by its prediction once its requests decode"
    ),
    "routing-prefix-once": (
        "Routing under load: a prefix computed once, the prompts ahead of a queued request, 64 cloud requests"
    ),
}


def write_docs(name: str, section: str) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    start, end, title = f"<!-- {name}:start -->", f"<!-- {name}:end -->", TITLES.get(name, name)
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if start not in text:
        text += f"\n## {title}\n\n{start}\n{end}\n"
    head, rest = text.split(start, 1)
    path.write_text(f"{head}{start}\n{section}\n{end}{rest.split(end, 1)[1]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workloads", type=lambda s: s.split(","), default=["burst-chat", "mixed"])
    parser.add_argument("--num-requests", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slo-ttft-ms", type=float, default=10_000)
    parser.add_argument("--slo-tpot-ms", type=float, default=200)
    parser.add_argument("--llama-server", default=None, help="default: what setup_llamaserver.sh built")
    parser.add_argument("--policies", type=lambda s: s.split(","), default=list(POLICIES))
    parser.add_argument("--vllm-python", default=None, help="a Python with vLLM installed (skipped without)")
    parser.add_argument("--only", type=lambda s: s.split(","), default=None, help="these systems only")
    parser.add_argument("--section", default="routing", help="results/SECTION.json, its docs section")
    args = parser.parse_args()
    home = Path(os.environ.get("HYBRIDGW_HOME", Path.home() / ".cache/hybridgw"))
    built = home / "llama-server/build/bin/llama-server"
    llama_server = args.llama_server or (str(built) if built.exists() else None)
    (ROOT / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as config_dir:
        found = [
            s
            for s in systems(
                llama_server, args.vllm_python, Path(config_dir), (args.slo_ttft_ms, args.slo_tpot_ms)
            )
            if (
                s.name.removeprefix("hybridgw-") not in POLICIES
                or s.name.removeprefix("hybridgw-") in args.policies
            )
            and (args.only is None or s.name in args.only)
        ]
        runs = run_rounds(args, found)
    table = medians(runs)
    (ROOT / "benchmarks" / "results" / f"{args.section}.json").write_text(
        json.dumps({"runs": runs, "medians": table}, indent=2) + "\n"
    )
    plot(table, args.section)
    section = markdown(table, args)
    write_docs(args.section, section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`hybridgw bench serve` against a real gateway with a real edge node behind it."""

import asyncio
import json
import sys

import pytest

from tests.fixtures.edge_node import edge_node, model_path  # noqa: F401 - fixtures
from tests.fixtures.gateway_app import Gateway, edge_config


async def _bench(url: str, model: str, flags: list[str]):
    """`hybridgw bench serve` in its own process -> (process, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "hybridgw", "bench", "serve", "--url", url, "--model", model, *flags],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    return process, stdout, stderr


async def test_bench_serve_reports_a_run_and_writes_its_plot(model_path, edge_node, tmp_path):  # noqa: F811
    workload = tmp_path / "workload.jsonl"
    lines = [{"messages": [{"role": "user", "content": f"Hi number {i}"}], "max_tokens": 5} for i in range(5)]
    lines.append(
        {
            "messages": [{"role": "user", "content": "mail me: ann@example.com"}],
            "max_tokens": 5,
            "private": True,
        }
    )
    workload.write_text("".join(json.dumps(line) + "\n" for line in lines))
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        flags = f"--workload {workload} --concurrency 3 --slo-ttft-ms 60000 --out {tmp_path} --label run"
        process, stdout, stderr = await _bench(f"{gw.url}/v1", "tiny", flags.split())
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert "Serving Benchmark Result" in stdout.decode()
    summary = json.loads((tmp_path / "run-result.json").read_text())
    assert (summary["completed"], summary["failed"], summary["total_output_tokens"]) == (6, 0, 30)
    assert summary["tier_share"] == {"edge": 1.0}
    assert (summary["private_requests"], summary["private_on_prem"]) == (1, 1.0)
    assert summary["slo_attainment"] == 1.0 and summary["ttft_ms"]["p99"] > 0
    assert (tmp_path / "run-result.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.integration
async def test_bench_serve_names_a_bad_workload():
    process, _, stderr = await _bench("http://127.0.0.1:9/v1", "m", ["--workload", "no-such"])
    assert process.returncode == 1 and b"unknown workload 'no-such'" in stderr

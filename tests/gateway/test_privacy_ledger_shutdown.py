"""A gateway stopped while its ledger's disk is full stops cleanly: no traceback, exit code 0
(what an orchestrator's SIGTERM sees), after requests refused for want of a record and readiness
probes that tried to write the ledger's outage record."""

import aiohttp
import pytest

from tests.fixtures.edge_node import free_port
from tests.fixtures.gateway_process import GatewayProcess

pytestmark = pytest.mark.integration
BODY = {"model": "tiny", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 1}


async def _refused_once(session, url: str) -> None:
    """Posts until the full disk refuses a request (a file's last page may take a few records)."""
    for _ in range(12):
        async with session.post(f"{url}/v1/chat/completions", json=BODY) as response:
            answer = await response.json()
        if answer.get("error", {}).get("code") == "privacy_ledger_unavailable":
            return
    raise AssertionError("the full disk refused no request")


async def _ready(session, url: str) -> int:
    async with session.get(f"{url}/health/ready") as response:
        return response.status


async def test_a_gateway_stopped_with_its_ledgers_disk_full_exits_cleanly(small_disk, model_path):
    if not small_disk.is_tmpfs:
        pytest.skip("a full disk another process sees needs a tmpfs (root)")
    ledger = small_disk.folder / "ledger.jsonl"
    # no node up: a refusal is recorded as any decision is, so the full disk refuses it all the same
    gateway = GatewayProcess(model_path, f"127.0.0.1:{free_port()}", extra=("--privacy-ledger", str(ledger)))
    url = gateway.url.removesuffix("/v1")
    try:
        async with aiohttp.ClientSession() as session:
            small_disk.fill()
            await _refused_once(session, url)
            assert await _ready(session, url) == 503
    finally:
        code = gateway.stop()
    lines = gateway.lines
    assert code == 0, "".join(lines)
    assert not [line for line in lines if "Traceback" in line], "".join(lines)
    assert any('"code": "privacy_ledger_unavailable"' in line for line in lines)

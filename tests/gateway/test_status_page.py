"""The status page: GET /status (JSON) and GET / rendered in headless Chromium against a gateway
with a real edge node process."""

import math
import shutil
import struct

import aiohttp
from playwright.async_api import async_playwright

from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from gateway.observability.activity import RecentActivity, RecentDecision
from tests.fixtures.gateway_app import MESSAGES, Gateway

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# as scripts/setup_system_tools.sh documents: no sandbox as root, no calls home on a closed network
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _decision(outcome: str, target: str, ttft: float | None, duration: float) -> RecentDecision:
    return RecentDecision(0.0, "r", "m", outcome, target, "n", "fastest", False, "clean", ttft, duration, 3)


def test_recent_activity_keeps_the_newest_decisions_and_nearest_rank_percentiles():
    activity = RecentActivity(decisions=3, window=100)
    values = list(range(1, 201))  # 1..200 ms; the window keeps the last 100: 101..200
    for value in values:
        activity.record(_decision("ok", "edge", float(value), float(value) * 2), tpot_ms=1.0)
    activity.record(_decision("shed", "", None, 0.0))
    window = values[-100:]
    for percent in (50, 95, 99):
        expected = sorted(window)[math.ceil(percent / 100 * len(window)) - 1]
        assert activity.latency()["edge"]["ttft_ms"][f"p{percent}"] == expected
        assert activity.latency()["all"]["duration_ms"][f"p{percent}"] == expected * 2
    assert activity.latency()["edge"]["ttft_ms"]["count"] == 100
    recent = activity.recent()
    assert [d["outcome"] for d in recent] == ["shed", "ok", "ok"]  # newest first, 3 kept
    assert [d["ttft_ms"] for d in recent[1:]] == [200.0, 199.0]


def _config(model_path, edge_node) -> GatewayConfig:
    return GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{edge_node.port}", ["tiny"])],
    )


async def _wait_until_healthy(session: aiohttp.ClientSession, url: str) -> dict:
    import asyncio

    for _ in range(100):
        async with session.get(f"{url}/status") as response:
            status = await response.json()
        if (
            status["nodes"]
            and status["nodes"][0]["health"] == "healthy"
            and status["nodes"][0]["max_running"]
        ):
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"the edge node never looked healthy: {status}")


async def test_status_json_shows_nodes_decisions_and_latency(model_path, edge_node):
    async with Gateway(_config(model_path, edge_node)) as gw, aiohttp.ClientSession() as session:
        await _wait_until_healthy(session, gw.url)
        ids = []
        for headers in ({}, {"X-Hybridgw-Privacy": "private"}):
            completion = await gw.client.chat.completions.create(
                model="tiny", messages=MESSAGES, max_tokens=4, temperature=0, extra_headers=headers
            )
            ids.append(completion.id.removeprefix("chatcmpl-"))
        async with session.get(f"{gw.url}/status") as response:
            assert response.status == 200 and response.headers["Cache-Control"] == "no-store"
            status = await response.json()
    assert status["models"] == ["tiny"]
    [node] = status["nodes"]
    assert (node["id"], node["kind"], node["health"], node["max_running"]) == ("edge-a", "edge", "healthy", 2)
    decisions = status["decisions"]
    assert [d["request_id"] for d in decisions] == ids[::-1]
    assert [(d["target"], d["node"], d["outcome"]) for d in decisions] == [("edge", "edge-a", "ok")] * 2
    assert [(d["private"], d["privacy_reason"]) for d in decisions] == [(True, "header"), (False, "clean")]
    assert all(0 < d["ttft_ms"] <= d["duration_ms"] for d in decisions)
    ttft = [d["ttft_ms"] for d in decisions]
    assert status["latency"]["edge"]["ttft_ms"] == {
        "p50": min(ttft),
        "p95": max(ttft),
        "p99": max(ttft),
        "count": 2,
    }


async def test_refused_requests_appear_as_decisions(model_path):
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        edge_nodes=[EdgeNodeEntry("edge-gone", "127.0.0.1:9", ["tiny"])],
    )
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 2}
        for _ in range(100):  # until the poller has marked the node down
            async with session.post(f"{gw.url}/v1/chat/completions", json=body) as response:
                if response.status == 503:
                    break
        async with session.get(f"{gw.url}/status") as response:
            status = await response.json()
    assert status["nodes"][0]["health"] == "down"
    assert status["decisions"][0]["outcome"] == "unavailable" and status["decisions"][0]["target"] == ""


async def test_status_page_renders_live_in_headless_chromium(model_path, edge_node, tmp_path):
    async with Gateway(_config(model_path, edge_node)) as gw, aiohttp.ClientSession() as session:
        await _wait_until_healthy(session, gw.url)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 800})
                errors: list[str] = []
                page.on("pageerror", lambda error: errors.append(str(error)))
                response = await page.goto(gw.url + "/")
                assert response.status == 200 and response.headers["content-type"].startswith("text/html")
                await page.wait_for_selector("body[data-loaded=true]")
                node_cells = await page.locator('#nodes tr[data-node="edge-a"] td').all_inner_texts()
                assert node_cells[:6] == ["edge-a", "edge", "healthy", "0 / 2", "0 / 16", "0.0%"]
                assert await page.locator("#decisions tbody tr").count() == 0
                completion = await gw.client.chat.completions.create(
                    model="tiny",
                    messages=MESSAGES,
                    max_tokens=4,
                    temperature=0,
                    extra_headers={"X-Hybridgw-Privacy": "private"},
                )
                # the page polls every second: the request shows up without a reload
                await page.wait_for_selector("#decisions tbody tr", timeout=5000)
                cells = await page.locator("#decisions tbody tr").first.locator("td").all_inner_texts()
                async with session.get(f"{gw.url}/status") as status_response:
                    reason = (await status_response.json())["decisions"][0]["reason"]
                request_id = completion.id.removeprefix("chatcmpl-")
                assert cells[1:8] == [request_id[:12], "tiny", "ok", "edge", "edge-a", reason, "yes (header)"]
                assert (
                    await page.locator('#latency tr[data-target="edge"][data-measure="ttft_ms"]').count() == 1
                )
                assert await page.locator("#models").inner_text() == "tiny"
                shot = tmp_path / "status.png"
                await page.screenshot(path=str(shot), full_page=True)
                assert errors == []
            finally:
                await browser.close()
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert width == 1280 and height >= 400

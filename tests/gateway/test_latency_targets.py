"""Latency targets and priority as a client sends them: headers checked, used by the router."""

import aiohttp
import pytest

from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config


@pytest.mark.parametrize("value", ["abc", "-5", "0", "nan"])
async def test_a_bad_target_header_is_a_400_naming_it(model_path, edge_node, value):
    body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 2}
    async with (
        Gateway(edge_config(model_path, edge_node)) as gw,
        aiohttp.ClientSession() as client,
        client.post(
            f"{gw.url}/v1/chat/completions", json=body, headers={"X-Hybridgw-TTFT-Target-Ms": value}
        ) as response,
    ):
        status, error = response.status, (await response.json())["error"]
    assert status == 400
    assert error["code"] == "invalid_header" and "X-Hybridgw-TTFT-Target-Ms" in error["message"]


async def test_targets_and_priority_reach_the_decision(model_path, edge_node):
    async with Gateway(edge_config(model_path, edge_node)) as gw, aiohttp.ClientSession() as client:
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 2, "priority": -3}
        headers = {"X-Hybridgw-TTFT-Target-Ms": "60000", "X-Hybridgw-TPOT-Target-Ms": "60000"}
        async with client.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers) as ok:
            assert ok.status == 200
        async with client.get(f"{gw.url}/status") as response:
            status = await response.json()
        assert status["decisions"][0]["reason"] == "edge_meets_target"
        body["priority"] = "high"
        async with client.post(f"{gw.url}/v1/chat/completions", json=body) as bad:
            assert bad.status == 400 and (await bad.json())["error"]["param"] == "priority"

"""GET /v1/models/{model}, GET /health, vLLM's /tokenize and /detokenize, and CORS (off unless
configured; preflights answered and every response to an allowed origin marked, streams too)."""

import aiohttp

from gateway.access.api_keys import ApiKey, hash_key
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.core.served_model import ServedModel
from gateway.prompt.chat_prompt import chat_prompt_ids
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config


def _config(model_path, **fields) -> GatewayConfig:
    return GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)], **fields)


async def test_model_retrieval_health_and_permissions(model_path):
    keys = [ApiKey("a", hash_key("sk-a"), "t", allowed_models=frozenset({"other"}))]
    async with Gateway(_config(model_path)) as gw, aiohttp.ClientSession() as session:
        card = await gw.client.models.retrieve("tiny")
        assert (card.id, card.object, card.owned_by) == ("tiny", "model", "hybridgw")
        async with session.get(f"{gw.url}/v1/models/nope") as response:
            assert response.status == 404 and (await response.json())["error"]["code"] == "model_not_found"
        async with session.get(f"{gw.url}/health") as response:
            assert response.status == 200 and (await response.json()) == {"status": "ok"}
    async with Gateway(_config(model_path, api_keys=keys)) as gw, aiohttp.ClientSession() as session:
        headers = {"Authorization": "Bearer sk-a"}
        async with session.get(f"{gw.url}/v1/models/tiny", headers=headers) as response:
            assert response.status == 403


async def test_tokenize_and_detokenize_as_vllm_does(model_path):
    served = ServedModel.load("tiny", model_path, 128)
    async with Gateway(_config(model_path)) as gw, aiohttp.ClientSession() as session:
        url = gw.url
        async with session.post(
            f"{url}/tokenize", json={"model": "tiny", "prompt": "Hello world"}
        ) as response:
            prompt = await response.json()
        assert prompt["tokens"] == served.tokenizer.encode("Hello world", add_special=True)
        assert (prompt["count"], prompt["max_model_len"]) == (len(prompt["tokens"]), 128)
        async with session.post(f"{url}/tokenize", json={"model": "tiny", "messages": MESSAGES}) as response:
            chat = await response.json()
        assert chat["tokens"] == chat_prompt_ids(served, MESSAGES)
        body = {"model": "tiny", "tokens": prompt["tokens"]}
        async with session.post(f"{url}/detokenize", json=body) as response:
            assert (await response.json())["prompt"] == served.tokenizer.decode(prompt["tokens"])
        for path, bad, param in (
            ("/detokenize", {"model": "tiny", "tokens": [10**6]}, "tokens"),
            ("/tokenize", {"model": "tiny", "prompt": "x", "colour": 1}, "colour"),
            ("/tokenize", {"model": "tiny", "messages": []}, "messages"),
        ):
            async with session.post(f"{url}{path}", json=bad) as response:
                assert response.status == 400 and (await response.json())["error"]["param"] == param


async def test_cors_is_off_unless_configured(model_path):
    preflight = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
    async with Gateway(_config(model_path)) as gw, aiohttp.ClientSession() as session:
        response = await session.options(f"{gw.url}/v1/chat/completions", headers=preflight)
        assert response.status == 405 and "Access-Control-Allow-Origin" not in response.headers
        response.release()


async def test_allowed_origins_get_preflights_and_marked_streams(model_path, edge_node):
    config = edge_config(model_path, edge_node)
    config.cors_allow_origins = ["https://app.example"]
    preflight = {
        "Origin": "https://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:
        async with session.options(f"{gw.url}/v1/chat/completions", headers=preflight) as response:
            assert response.status == 204
            assert "POST" in response.headers["Access-Control-Allow-Methods"]
            assert response.headers["Access-Control-Allow-Headers"] == "authorization, content-type"
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3, "stream": True}
        for origin, marked in (("https://app.example", True), ("https://evil.example", False)):
            headers = {"Origin": origin}
            async with session.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers) as response:
                assert response.status == 200 and (await response.read()).endswith(b"data: [DONE]\n\n")
                assert (response.headers.get("Access-Control-Allow-Origin") == origin) is marked
                if marked:
                    assert "X-Hybridgw-Node" in response.headers["Access-Control-Expose-Headers"]

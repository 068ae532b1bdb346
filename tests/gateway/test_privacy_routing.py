"""Privacy as a hospital tries it: a gateway in `auto` mode whose only node is a real cloud worker.
Personal data anywhere in what would leave (a message, a schema's description or enum, a regex,
a choice list, a Responses `text.format`, a tool) gets 503 `no_private_node`, never the cloud;
the same requests without it go to the cloud."""

import asyncio

import aiohttp
import pytest

from cloud.llm_engine import LLMEngine
from cloud.worker import CloudWorker
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from shared.async_engine import AsyncEngine
from tests.fixtures.gateway_app import Gateway
from tests.fixtures.polling import eventually

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}}


def _chat(content: str = "Fill in the form.", **fields) -> tuple[str, dict]:
    return "/v1/chat/completions", {
        "messages": [{"role": "user", "content": content}],
        "max_tokens": 4,
        **fields,
    }


def _format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "f", "schema": schema}}


def _cases(pii: str) -> dict[str, tuple[str, dict]]:
    """Each carries `pii` in one place only ("" for the clean twin)."""
    schema = {**SCHEMA, "description": f"Contact {pii}"} if pii else SCHEMA
    enum = {"type": "string", "enum": ["a", pii or "b"]}
    regex = f"(no|{pii.replace('.', '[.]')})" if pii else "(no|yes)"
    return {
        "message": _chat(f"Patient note: {pii}" if pii else "Patient note: none"),
        "schema description": _chat(response_format=_format(schema)),
        "schema enum": _chat(response_format=_format(enum)),
        "regex": _chat(structured_outputs={"regex": regex}),
        "choice": _chat(structured_outputs={"choice": ["no", pii or "yes"]}),
        "guided_choice": _chat(guided_choice=["no", pii or "yes"]),
        "responses text.format": ("/v1/responses", {
            "input": "Fill in the form.", "max_output_tokens": 4,
            "text": {"format": {"type": "json_schema", "name": "f", "schema": schema}},
        }),
        "tool description": _chat(tools=[{"type": "function", "function": {
            "name": "f", "description": f"Calls {pii}" if pii else "Calls", "parameters": SCHEMA}}]),
        "completion prompt": ("/v1/completions", {"prompt": f"Note: {pii or 'none'}", "max_tokens": 4}),
    }  # fmt: skip


PII = [
    "13812345678",
    "john dot doe at example dot com",
    "card 4539 1488\n0343 6467",
    "Jane Doe, MRN 00123456, diagnosed with HIV",
    "BSN 1112.22.333",
]


@pytest.mark.integration
async def test_personal_data_in_any_field_never_reaches_the_cloud(tiny_model, redis_url, redis_keys):
    from formats.ggml_types import GGMLType
    from tests.fixtures.tiny_models import config_for

    model_path = str(tiny_model(GGMLType.F32, config=config_for(GGMLType.F32, context_length=2048)))
    engine = AsyncEngine(LLMEngine(model_path, num_blocks=256, block_size=4))
    client_stop = asyncio.Event()
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    worker = CloudWorker(engine, client, redis_keys, "w1", max_active=4, heartbeat_s=0.1)
    task = asyncio.create_task(worker.run(client_stop))
    config = GatewayConfig(
        models=[ModelEntry("tiny", model_path, context_length=2048)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
    )
    try:
        await eventually(lambda: client.exists(redis_keys.worker_heartbeat("w1")), what="a heartbeat")
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:

            async def post(path: str, body: dict) -> tuple[int, dict, dict]:
                async with session.post(f"{gw.url}{path}", json={"model": "tiny", **body}) as response:
                    return response.status, dict(response.headers), await response.json()

            for name, (path, body) in _cases("").items():  # the clean twins run on the cloud
                status, headers, answer = await post(path, body)
                assert (status, headers.get("X-Hybridgw-Target")) == (200, "cloud"), (name, answer)
            for pii in PII:
                for name, (path, body) in _cases(pii).items():
                    status, _, answer = await post(path, body)
                    code = answer.get("error", {}).get("code")
                    assert (status, code) == (503, "no_private_node"), (pii, name, status, str(answer)[:300])
    finally:
        client_stop.set()
        await task
        engine.close()
        await client.aclose()

"""Signed reply chunks and heartbeats (shared/chunk_signing.py): what a worker signs verifies,
anything changed or signed by another key does not; against a real worker and Redis, forged
chunks and heartbeats written with the cloud's Redis rights but no key count for nothing."""

import asyncio
import json

import redis.asyncio as aioredis

from cloud.llm_engine import LLMEngine
from cloud.worker import CloudWorker
from gateway.backends.cloud import CloudBackend
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.serving import app_keys, handler
from shared.async_engine import AsyncEngine
from shared.chunk_signing import ChunkSigner, ChunkVerifier, worker_key
from shared.proto import inference_pb2 as pb
from shared.reply_stream import fence
from tests.fixtures.edge_node import model_path  # noqa: F401 - a fixture
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.polling import eventually

SECRET = b"test-signing-secret"


def _chunk(owner: str) -> pb.GenerateChunk:
    chunk = pb.GenerateChunk(request_id="r", index=0, owner=owner)
    chunk.tokens.add(token_id=5, logprob=-0.5)
    return chunk


def test_what_a_worker_signs_verifies_and_nothing_else_does():
    verifier = ChunkVerifier(SECRET)
    signed = ChunkSigner(worker_key(SECRET, "w1")).sign(_chunk("w1/turn"))
    assert verifier.chunk(signed)
    tampered = pb.GenerateChunk()
    tampered.CopyFrom(signed)
    tampered.tokens[0].token_id = 6
    as_another = ChunkSigner(worker_key(SECRET, "w2")).sign(_chunk("w1/turn"))  # w2 posing as w1
    unsigned = _chunk("w1/turn")
    assert not any(verifier.chunk(c) for c in (tampered, as_another, unsigned))
    assert ChunkVerifier(None).chunk(unsigned)  # no secret: a trusted deployment checks nothing
    beat = ChunkSigner(worker_key(SECRET, "w1")).sign_heartbeat({"stats": "{}", "time": "1.0"})
    assert verifier.heartbeat("w1", beat) and not verifier.heartbeat("w2", beat)
    assert not verifier.heartbeat("w1", {**beat, "stats": '{"max_running": 999}'})


async def test_forged_chunks_and_heartbeats_count_for_nothing(model_path, redis_url, redis_keys, monkeypatch):  # noqa: F811
    client = aioredis.from_url(redis_url)
    engine = AsyncEngine(LLMEngine(str(model_path), num_blocks=64, block_size=4))
    key = worker_key(SECRET, "w-signed")
    worker = CloudWorker(
        engine, client, redis_keys, "w-signed", max_active=4, heartbeat_s=0.1, signing_key=key
    )
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    # a forger holding the cloud's Redis credentials, but no key: a heartbeat, and a reply stream
    # written before the request is sent, naming the real worker as its owner
    ghost = {"stats": json.dumps({"kind": "cloud", "max_running": 1000}), "time": "0"}
    await client.hset(redis_keys.worker_heartbeat("ghost"), mapping=ghost)
    forged = _chunk("w-signed/forged")
    forged.request_id, forged.finish_reason = "forged0-0", pb.FINISH_REASON_STOP
    for chunk in (fence("forged0-0", "w-signed/forged"), forged):
        chunk.signature = b"\0" * 16
        await client.xadd(redis_keys.reply_stream("forged0-0"), {"chunk": chunk.SerializeToString()})
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
        cloud_signing_secret=SECRET.decode(),
    )
    try:
        async with Gateway(config) as gw:
            backend = next(b for b in gw.runner.app[app_keys.BACKENDS] if isinstance(b, CloudBackend))
            await eventually(lambda: "w-signed" in backend.workers, what="the signed heartbeat")
            assert "ghost" not in backend.workers
            assert backend.state.shares_prefix_blocks  # one worker (the ghost counts for nothing)
            body = {
                "model": "tiny",
                "messages": MESSAGES,
                "max_tokens": 6,
                "temperature": 0,
                "extra_body": {"ignore_eos": True},
            }
            clean = await gw.client.chat.completions.create(**body)
            monkeypatch.setattr(handler, "new_request_id", lambda: "forged0")
            attacked = await gw.client.chat.completions.create(**body)
        assert attacked.choices[0].message.content == clean.choices[0].message.content
        assert attacked.usage.completion_tokens == 6
    finally:
        stop.set()
        await task
        engine.close()
        await client.aclose()

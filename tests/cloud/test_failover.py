"""Exactly-once failover: a worker paused past the claim time (a GC pause, SIGSTOP, a slow host)
loses its request to another worker; when it wakes, each write it tries is refused atomically by
the fence (cloud/worker/fenced_reply.py), so it stops: the client gets every token once, in order, from
one worker at a time, and a request finished meanwhile is neither computed again nor written
back into Redis."""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from cloud.engine.llm_engine import LLMEngine
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest
from shared.proto import inference_pb2 as pb
from shared.sampling import SamplingParams
from tests.cloud.test_worker import RunningWorker, _read_reply
from tests.fixtures.polling import eventually
from tests.fixtures.tiny_models import config_for

PROMPT = [5, 17, 200, 33, 91]
MAX_TOKENS = 600


def _greedy(model_path) -> list[int]:
    engine = LLMEngine(str(model_path), dtype="float32", num_blocks=256, block_size=16)
    engine.add(
        EngineRequest("x", PROMPT, SamplingParams(temperature=0, max_tokens=MAX_TOKENS, ignore_eos=True))
    )
    tokens = []
    while engine.has_work():
        tokens += [o.token.token_id for o in engine.step().outputs]
    return tokens


async def _owners(client, reply: str) -> list[tuple[str, bool]]:
    """(owner, is a fence) of every chunk in the reply stream, in order."""
    entries = []
    for _, fields in await client.xrange(reply):
        chunk = pb.GenerateChunk()
        chunk.ParseFromString(fields[b"chunk"])
        entries.append((chunk.owner, chunk.fence))
    return entries


def _paused_worker(model_path, redis_url: str, redis_keys) -> tuple[subprocess.Popen, list[str]]:
    # the reference's dtype and the taker's (RunningWorker): tokens are compared bit for bit
    command = ["cloud", "--model", str(model_path), "--dtype", "float32", "--redis", redis_url]
    command += ["--prefix", redis_keys.prefix]
    command += ["--name", "paused", "--claim-idle-ms", "500", "--grpc-port", "0"]
    paused = subprocess.Popen([sys.executable, "-m", "hybridgw", *command], stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(paused.stderr), daemon=True).start()
    return paused, lines


async def _serving(lines: list[str], redis_url: str, redis_keys, request_id: str):
    """Once the paused-to-be worker is up: the request queued and its first chunk written
    (the worker is serving it); the Redis client and the reply stream's key."""
    import redis.asyncio as aioredis

    await eventually(lambda: any('"listening"' in line for line in lines), timeout=120, what="worker up")
    client = aioredis.from_url(redis_url)
    sampling = pb.SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
    request = pb.GenerateRequest(request_id=request_id, prompt_token_ids=PROMPT, sampling=sampling)
    await client.xadd(redis_keys.request_stream, {"request": request.SerializeToString()})
    reply = redis_keys.reply_stream(request_id)
    await eventually(lambda: client.xlen(reply), what="the first chunk")
    return client, reply


def _lost(lines: list[str]) -> bool:
    return any('"outcome": "lost"' in line for line in lines)


@pytest.mark.integration
async def test_a_paused_worker_that_wakes_up_is_fenced_off(tiny_model, redis_url, redis_keys):
    model_path = tiny_model(GGMLType.F32, config=config_for(GGMLType.F32, context_length=4096))
    expected = _greedy(model_path)
    paused, lines = _paused_worker(model_path, redis_url, redis_keys)
    taker = None
    try:
        client, reply = await _serving(lines, redis_url, redis_keys, "r")
        os.kill(paused.pid, signal.SIGSTOP)
        taker = RunningWorker(
            str(model_path), redis_url, redis_keys, name="taker", claim_idle_ms=500, num_blocks=256
        )

        async def taker_wrote() -> bool:
            owners = [owner for owner, is_fence in await _owners(client, reply) if not is_fence]
            return sum(owner.startswith("taker/") for owner in owners) >= 2

        await eventually(taker_wrote, timeout=60, what="the taker's chunks")
        os.kill(paused.pid, signal.SIGCONT)  # it wakes while the taker is still writing
        await eventually(lambda: _lost(lines), timeout=60, what="the woken worker stopping as lost")
        owners = await _owners(client, reply)
        taker_fence = next(
            i for i, (owner, is_fence) in enumerate(owners) if is_fence and owner.startswith("taker/")
        )
        assert [owner for owner, _ in owners[taker_fence:] if owner.startswith("paused/")] == []
        chunks = await _read_reply(client, redis_keys, "r")
        tokens = [t.token_id for c in chunks for t in c.tokens]
        assert tokens == expected and chunks[-1].usage.completion_tokens == MAX_TOKENS
        await client.aclose()
    finally:
        os.kill(paused.pid, signal.SIGCONT)
        paused.terminate()
        paused.wait(timeout=30)
        if taker is not None:
            await taker.close()


@pytest.mark.integration
async def test_a_worker_woken_after_the_takeover_finished_writes_and_computes_nothing(
    tiny_model, redis_url, redis_keys
):
    """Paused until the taker finished and the reader deleted the reply stream: the woken worker
    must not generate the request again nor re-create the stream (it had written 105 entries
    back, the first without an expiry)."""
    model_path = tiny_model(GGMLType.F32, config=config_for(GGMLType.F32, context_length=4096))
    paused, lines = _paused_worker(model_path, redis_url, redis_keys)
    taker = None
    try:
        client, reply = await _serving(lines, redis_url, redis_keys, "r2")
        os.kill(paused.pid, signal.SIGSTOP)
        assert await client.ttl(reply) > 0  # a reply stream always has an expiry
        taker = RunningWorker(
            str(model_path), redis_url, redis_keys, name="taker", claim_idle_ms=500, num_blocks=256
        )
        chunks = await _read_reply(client, redis_keys, "r2")  # to the end; then the reader deletes it
        assert chunks[-1].usage.completion_tokens == MAX_TOKENS
        await client.delete(reply)
        os.kill(paused.pid, signal.SIGCONT)
        await eventually(lambda: _lost(lines), timeout=60, what="the woken worker stopping as lost")
        assert await client.exists(reply) == 0
        lost = json.loads(next(line for line in lines if '"completion_tokens"' in line and '"lost"' in line))
        assert lost["completion_tokens"] < MAX_TOKENS  # it stopped at its first refused write
        await client.aclose()
    finally:
        os.kill(paused.pid, signal.SIGCONT)
        paused.terminate()
        paused.wait(timeout=30)
        if taker is not None:
            await taker.close()

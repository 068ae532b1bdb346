"""The cloud worker against a real Redis: queue in, reply streams out, resume after a dead worker."""

import asyncio
import json
import typing

import pytest
import redis.asyncio as aioredis

from cloud.engine.llm_engine import LLMEngine
from cloud.worker.redis_worker import CloudWorker
from formats.ggml_types import GGMLType
from shared import redis_client
from shared.async_engine import AsyncEngine
from shared.engine import EngineRequest
from shared.proto import inference_pb2 as pb
from shared.reply_stream import ReplyFollower, fence
from shared.sampling import SamplingParams
from tests.edge.test_server import token_offsets
from tests.fixtures.polling import eventually

PROMPT = [5, 17, 200, 33, 91]


@pytest.fixture(scope="module")
def model_path(tiny_model):
    return str(tiny_model(GGMLType.F32))


@pytest.fixture(scope="module")
def expected_tokens(model_path):
    engine = LLMEngine(model_path, num_blocks=64, block_size=4)
    engine.add(EngineRequest("x", PROMPT, SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)))
    tokens = []
    while engine.has_work():
        tokens += [o.token.token_id for o in engine.step().outputs]
    return tokens


def _request(request_id: str, max_tokens: int = 12) -> bytes:
    sampling = pb.SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return pb.GenerateRequest(
        request_id=request_id, prompt_token_ids=PROMPT, sampling=sampling
    ).SerializeToString()


async def _read_reply(client, keys, request_id: str, timeout: float = 60) -> list[pb.GenerateChunk]:
    """The chunks that count, as the gateway reads them (the current owner's, each token once)."""
    chunks, last_id, follower = [], "0-0", ReplyFollower()
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        assert asyncio.get_running_loop().time() < deadline, "no final chunk"
        entries = await client.xread({keys.reply_stream(request_id): last_id}, block=200)
        for _, messages in entries or []:
            for entry_id, fields in messages:
                last_id = entry_id
                chunk = pb.GenerateChunk()
                chunk.ParseFromString(fields[b"chunk"])
                chunk = follower.accept(chunk)
                if chunk is None:
                    continue
                chunks.append(chunk)
                if chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED:
                    return chunks


async def _no_pending(client, keys) -> bool:
    return (await client.xpending(keys.request_stream, keys.consumer_group))["pending"] == 0


class RunningWorker:
    """A CloudWorker on its own engine, in this test's event loop; closed at the test's end
    whatever its outcome (a failed assertion never leaves it running into the loop's teardown)."""

    started: typing.ClassVar[list["RunningWorker"]] = []

    def __init__(self, model_path, redis_url, keys, name="worker-a", claim_idle_ms=400, num_blocks=64):
        RunningWorker.started.append(self)
        # float32: tests compare its tokens with float32 references'
        engine = LLMEngine(model_path, dtype="float32", num_blocks=num_blocks, block_size=4)
        self.engine = AsyncEngine(engine)
        self.client = redis_client.connect(redis_url)  # as `hybridgw cloud` connects
        self.worker = CloudWorker(
            self.engine, self.client, keys, name, max_active=4, claim_idle_ms=claim_idle_ms, heartbeat_s=0.1
        )
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self.worker.run(self.stop))

    async def close(self):
        if self.stop.is_set():
            return
        self.stop.set()
        await self.task
        self.engine.close()
        await self.client.aclose()


@pytest.fixture(autouse=True)
async def workers_closed():
    yield
    while RunningWorker.started:
        running = RunningWorker.started.pop()
        try:
            await asyncio.wait_for(running.close(), 30)
        except TimeoutError:
            running.task.cancel()
            running.engine.close()


async def test_requests_flow_through_the_queue(model_path, redis_url, redis_keys, expected_tokens):
    running = RunningWorker(model_path, redis_url, redis_keys)
    client = running.client
    await client.xadd(redis_keys.request_stream, {"request": _request("r1")})
    chunks = await _read_reply(client, redis_keys, "r1")
    assert [t.token_id for c in chunks for t in c.tokens] == expected_tokens
    assert [c.index for c in chunks] == token_offsets(chunks)
    assert chunks[-1].finish_reason == pb.FINISH_REASON_LENGTH and chunks[-1].usage.prompt_tokens == 5
    heartbeat = await client.hgetall(redis_keys.worker_heartbeat("worker-a"))
    assert json.loads(heartbeat[b"stats"])["kind"] == "cloud"
    await eventually(lambda: _no_pending(client, redis_keys), what="the entry acknowledged")
    assert await client.xlen(redis_keys.request_stream) == 0  # the prompt left Redis with it
    assert 0 < await client.ttl(redis_keys.reply_stream("r1")) <= 60
    consumers = await client.xinfo_consumers(redis_keys.request_stream, redis_keys.consumer_group)
    assert [c["name"] for c in consumers] == [b"worker-a"]
    await running.close()
    assert not await client.exists(redis_keys.worker_heartbeat("worker-a"))
    for stream in (redis_keys.request_stream, redis_keys.direct_stream("worker-a")):  # it left the group
        assert await client.xinfo_consumers(stream, redis_keys.consumer_group) == []


async def test_a_dead_workers_request_resumes_without_gap_or_duplicate(
    model_path, redis_url, redis_keys, expected_tokens
):
    client = aioredis.from_url(redis_url)
    await client.xgroup_create(redis_keys.request_stream, redis_keys.consumer_group, id="0", mkstream=True)
    await client.xadd(redis_keys.request_stream, {"request": _request("r2")})
    # a worker takes the request, streams 3 tokens, and dies without acknowledging it
    await client.xreadgroup(
        redis_keys.consumer_group, "dead-worker", {redis_keys.request_stream: ">"}, count=1
    )
    reply = redis_keys.reply_stream("r2")
    await client.xadd(reply, {"chunk": fence("r2", "dead-worker/1").SerializeToString()})
    for index, token_id in enumerate(expected_tokens[:3]):
        token = pb.GeneratedToken(token_id=token_id)
        chunk = pb.GenerateChunk(request_id="r2", index=index, tokens=[token], owner="dead-worker/1")
        await client.xadd(reply, {"chunk": chunk.SerializeToString()})
    running = RunningWorker(model_path, redis_url, redis_keys, name="survivor", claim_idle_ms=300)
    chunks = await _read_reply(client, redis_keys, "r2")
    assert [c.index for c in chunks] == token_offsets(chunks)
    assert [t.token_id for c in chunks for t in c.tokens] == expected_tokens
    assert chunks[-1].usage.completion_tokens == 12
    await running.close()
    await client.aclose()


async def test_the_direct_stream_of_a_dead_worker_is_adopted(
    model_path, redis_url, redis_keys, expected_tokens
):
    """The gateway sent requests to a worker's direct stream; the worker died (its heartbeat is
    gone): one it had read and one it never read are both served by another worker."""
    client = aioredis.from_url(redis_url)
    stream = redis_keys.direct_stream("gone")
    await client.hset(redis_keys.worker_directory, "gone", "1")
    await client.xgroup_create(stream, redis_keys.consumer_group, id="0", mkstream=True)
    await client.xadd(stream, {"request": _request("read-then-died")})
    await client.xreadgroup(redis_keys.consumer_group, "gone", {stream: ">"}, count=1)
    await client.xadd(stream, {"request": _request("never-read")})
    running = RunningWorker(model_path, redis_url, redis_keys, name="adopter", claim_idle_ms=300)
    for request_id in ("never-read", "read-then-died"):
        chunks = await _read_reply(client, redis_keys, request_id)
        assert [t.token_id for c in chunks for t in c.tokens] == expected_tokens
    deadline = asyncio.get_running_loop().time() + 60  # a loaded machine: polled, not slept
    while (await client.xpending(stream, redis_keys.consumer_group))["pending"]:  # acked after the reply
        assert asyncio.get_running_loop().time() < deadline, "never acknowledged"
        await asyncio.sleep(0.05)
    await running.close()
    await client.aclose()


async def test_a_cancel_flag_aborts_the_request(model_path, redis_url, redis_keys):
    running = RunningWorker(model_path, redis_url, redis_keys)
    client = running.client
    max_tokens = 256 - len(PROMPT) - 1  # the tiny model's whole context: the longest it can run
    await client.xadd(redis_keys.request_stream, {"request": _request("r3", max_tokens=max_tokens)})
    # flagged once its first token is out (the worker checks flags every 0.1 s here)
    assert await client.xread({redis_keys.reply_stream("r3"): "0-0"}, block=30_000)
    await client.set(redis_keys.cancel_flag("r3"), 1, ex=60)
    chunks = await _read_reply(client, redis_keys, "r3")
    assert chunks[-1].finish_reason == pb.FINISH_REASON_ABORT and len(chunks) < max_tokens
    await eventually(lambda: _no_pending(client, redis_keys), what="the entry acknowledged")
    await running.close()


async def test_a_malformed_message_is_dropped_and_work_goes_on(
    model_path, redis_url, redis_keys, expected_tokens
):
    running = RunningWorker(model_path, redis_url, redis_keys)
    client = running.client
    await client.xadd(redis_keys.request_stream, {"request": b"\xff\x00garbage"})
    await client.xadd(redis_keys.request_stream, {"request": _request("r4", max_tokens=2)})
    chunks = await _read_reply(client, redis_keys, "r4")  # tokens may come one or two per chunk
    assert [t.token_id for c in chunks for t in c.tokens] == expected_tokens[:2]
    assert chunks[-1].finish_reason == pb.FINISH_REASON_LENGTH
    await eventually(lambda: _no_pending(client, redis_keys), what="both entries acknowledged")
    await running.close()


async def test_crashed_workers_are_forgotten_once_nothing_of_theirs_is_left(redis_url, redis_keys):
    """A worker that died without leaving (SIGKILL): once its entries are taken, the group,
    the worker directory and the streams no longer hold it; a live worker is kept."""
    from cloud.worker.streams import WorkerStreams

    client = aioredis.from_url(redis_url)
    live = WorkerStreams(client, redis_keys, "live-worker", claim_idle_ms=50)
    ghost = WorkerStreams(client, redis_keys, "ghost-worker", claim_idle_ms=50)
    for streams in (live, ghost):
        await streams.setup()
        await streams.read(room=1, block_ms=1)  # each is a consumer of both of its streams now
    await client.xadd(redis_keys.request_stream, {"request": _request("orphan")})
    assert len(await ghost.read(room=1, block_ms=1)) == 1  # the ghost took it, then died
    await client.set(redis_keys.worker_heartbeat("live-worker"), "1")  # only the live one beats

    async def ghost_gone() -> bool:
        await live.claim(room=4)
        consumers = await client.xinfo_consumers(redis_keys.request_stream, redis_keys.consumer_group)
        return {c["name"].decode() for c in consumers} == {"live-worker"}

    await eventually(ghost_gone, what="the ghost forgotten")
    pending = await client.xpending(redis_keys.request_stream, redis_keys.consumer_group)
    assert (
        pending["pending"] == 1 and pending["consumers"][0]["name"] == b"live-worker"
    )  # its entry taken over
    assert not await client.exists(redis_keys.direct_stream("ghost-worker"))
    assert await client.hkeys(redis_keys.worker_directory) == [b"live-worker"]
    await client.aclose()

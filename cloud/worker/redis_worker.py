"""The cloud worker: pulls GenerateRequests from the Redis request stream and streams GenerateChunks
to each request's reply stream.

- Pulls with the consumer group only when it has room (running requests < max_active), from the
  shared request stream and its own direct stream (cloud/worker/streams.py).
- Keeps its pending entries fresh (XCLAIM JUSTID to itself) while it works on them, so only a
  worker that stopped doing so (died) has entries that go idle.
- Claims entries idle longer than `claim_idle_ms` (XAUTOCLAIM) and resumes them after the tokens
  already in their reply stream: the client's stream continues without a gap or a duplicate.
- A cancel flag set for a request aborts it; a heartbeat hash with its stats expires unless renewed.
- On stop it pulls nothing more, finishes what it holds, removes its heartbeat.
"""

import asyncio
import contextlib
import json
import logging
import time
import uuid

import redis.asyncio as aioredis
from opentelemetry.trace import SpanKind

from cloud.worker.fenced_reply import Fenced, FencedReply
from cloud.worker.streams import WorkerStreams
from shared.async_engine import AsyncEngine
from shared.chunk_signing import ChunkSigner
from shared.engine import InvalidRequestError
from shared.proto import inference_pb2 as pb
from shared.proto_convert import engine_request_from_proto, sampling_from_proto, stats_to_heartbeat
from shared.redis_keys import RedisKeys
from shared.reply_stream import ReplyFollower, fence
from shared.sampling import InvalidSamplingParams
from shared.serve_generate import GenerateProgress, serve_generate, start_generate_span
from shared.telemetry import extract_context

logger = logging.getLogger("hybridgw.cloud")
RECONNECT_MIN_S = 0.2
RECONNECT_MAX_S = 5.0


class CloudWorker:
    def __init__(
        self,
        engine: AsyncEngine,
        client: aioredis.Redis,
        keys: RedisKeys,
        name: str,
        max_active: int,
        claim_idle_ms: int = 15_000,
        heartbeat_s: float = 2.0,
        reply_ttl_s: int = 60,  # how long a reply stream outlives its last chunk (the gateway deletes it)
        signing_key: bytes | None = None,  # its key (shared/chunk_signing.py); None: nothing signed
    ):
        self.engine = engine
        self.redis = client
        self.keys = keys
        self.name = name
        self.max_active = max_active
        self.claim_idle_ms = claim_idle_ms
        self.heartbeat_s = heartbeat_s
        self.reply_ttl_s = reply_ttl_s
        self.signer = ChunkSigner(signing_key)
        self.streams = WorkerStreams(client, keys, name, claim_idle_ms)
        self.fenced = FencedReply(client, keys, reply_ttl_s)
        # request id -> (stream, entry id, task)
        self.active: dict[str, tuple[str, bytes, asyncio.Task]] = {}
        self.lost: set[str] = set()  # requests another worker took over while this one was paused
        self.connected = False  # Redis answers: the worker consumes (its node's readiness)

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop`: a Redis that went away (restarted, unreachable, a pause past the socket
        timeout) is reconnected with backoff and the streams set up again; `connected` says
        which, for the node's readiness. Then it finishes what it holds and leaves the group."""
        backoff = RECONNECT_MIN_S
        while not stop.is_set():
            try:
                await self._consume(stop)
            except (aioredis.RedisError, OSError) as error:
                self.connected = False
                logger.warning(json.dumps({"event": "redis_lost", "worker": self.name, "error": str(error)}))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff)
                backoff = min(backoff * 2, RECONNECT_MAX_S)
            else:
                backoff = RECONNECT_MIN_S
        tasks = [task for _, _, task in self.active.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(aioredis.RedisError, OSError):
            await self.streams.leave()
            await self.redis.delete(self.keys.worker_heartbeat(self.name))

    async def _consume(self, stop: asyncio.Event) -> None:
        await self.streams.setup()
        if not self.connected:
            logger.info(json.dumps({"event": "redis_connected", "worker": self.name}))
        self.connected = True
        next_maintenance = 0.0
        while not stop.is_set():
            if time.monotonic() >= next_maintenance:
                await self._maintain()
                next_maintenance = time.monotonic() + self.heartbeat_s
            room = self.max_active - len(self.active)
            if room <= 0:
                await asyncio.sleep(0.02)
                continue
            for stream, entry_id, fields in await self.streams.read(room, block_ms=100):
                self._start(stream, entry_id, fields)

    async def _maintain(self) -> None:
        """Heartbeat, keep our entries fresh, honour cancel flags, claim entries of dead workers."""
        stats = stats_to_heartbeat(self.engine.stats)
        heartbeat_key = self.keys.worker_heartbeat(self.name)
        beat = self.signer.sign_heartbeat({"stats": json.dumps(stats), "time": repr(time.time())})
        await self.redis.hset(heartbeat_key, mapping=beat)
        await self.redis.expire(heartbeat_key, max(1, int(self.heartbeat_s * 3)))
        if self.active:
            stream_to_entry_ids: dict[str, list[bytes]] = {}
            for stream, entry_id, _ in self.active.values():
                stream_to_entry_ids.setdefault(stream, []).append(entry_id)
            lost = await self.streams.keep_fresh(stream_to_entry_ids)
            for request_id, (_, entry_id, task) in list(self.active.items()):
                if entry_id in lost:  # fenced off already: stop, write nothing more, ack nothing
                    self.lost.add(request_id)
                    task.cancel()
            request_ids = list(self.active)
            flags = await self.redis.mget([self.keys.cancel_flag(r) for r in request_ids])
            for request_id, flag in zip(request_ids, flags, strict=True):
                if flag is not None:
                    self.active[request_id][2].cancel()
        room = self.max_active - len(self.active)
        if room > 0:
            for stream, entry_id, fields in await self.streams.claim(room):
                if fields:  # deleted entries come back empty
                    logger.info(
                        json.dumps({"event": "claimed", "entry": entry_id.decode(), "worker": self.name})
                    )
                    self._start(stream, entry_id, fields, claimed=True)

    def _start(self, stream: str, entry_id: bytes, fields: dict, claimed: bool = False) -> None:
        """`claimed`: taken over from a dead or paused worker (the reply stream may hold tokens
        already sent); a first delivery starts from nothing, whatever the stream holds."""
        request = pb.GenerateRequest()
        try:
            request.ParseFromString(fields[b"request"])
        except (KeyError, Exception):  # a malformed message must not stop the worker
            logger.warning(json.dumps({"event": "bad_message", "entry": entry_id.decode()}))
            asyncio.get_running_loop().create_task(self.streams.ack(stream, entry_id))
            return
        request_id = request.request_id or entry_id.decode()
        if request_id in self.active:
            return
        carrier = {k.decode(): v.decode() for k, v in fields.items() if k in (b"traceparent", b"tracestate")}
        task = asyncio.get_running_loop().create_task(
            self._serve(stream, entry_id, request_id, request, carrier, claimed)
        )
        self.active[request_id] = (stream, entry_id, task)
        task.add_done_callback(lambda done: self._finished(request_id, done))

    def _finished(self, request_id: str, task: asyncio.Task) -> None:
        self.active.pop(request_id, None)
        if not task.cancelled() and task.exception() is not None:  # Redis lost mid-request
            logger.warning(
                json.dumps(
                    {"event": "request_failed", "request_id": request_id, "error": str(task.exception())}
                )
            )

    async def _serve(
        self,
        stream: str,
        entry_id: bytes,
        request_id: str,
        request: pb.GenerateRequest,
        carrier: dict[str, str],
        claimed: bool,
    ) -> None:
        span = start_generate_span(
            "hybridgw.cloud",
            extract_context(carrier),
            SpanKind.CONSUMER,
            self.name,
            request.model,
            len(request.prompt_token_ids),
        )
        try:
            await self._serve_traced(stream, entry_id, request_id, request, span, claimed)
        except Fenced:  # another worker's turn (or finished): nothing more written or computed
            self.lost.add(request_id)
            span.set_attribute("hybridgw.outcome", "lost")
            logger.info(
                json.dumps(
                    {"event": "request", "request_id": request_id, "outcome": "lost", "worker": self.name}
                )
            )
        finally:
            span.end()
            with contextlib.suppress(aioredis.RedisError, OSError):  # Redis gone: the entry stays pending
                if request_id not in self.lost and await self.streams.owns(stream, entry_id):
                    await self.streams.ack(stream, entry_id)
            self.lost.discard(request_id)

    async def _serve_traced(
        self, stream: str, entry_id: bytes, request_id: str, request: pb.GenerateRequest, span, claimed: bool
    ) -> None:
        reply = self.keys.reply_stream(request_id)
        owner = f"{self.name}/{uuid.uuid4().hex[:12]}"  # this worker's turn at the request
        signed_fence = self._signed(fence(request_id, owner))
        fence_id = await self.fenced.take(stream, entry_id, self.name, request_id, owner, signed_fence)
        # only a request taken over can have tokens out already (what else a stream holds then
        # was not written by a worker; the gateway, verifying signatures, does not count it)
        emitted, finished = await self._already_emitted(reply, fence_id) if claimed else ([], False)
        if finished:
            return
        resumed = list(request.resume_token_ids) + emitted
        started, progress = time.perf_counter(), GenerateProgress()
        outcome, count = "error", 0  # both counted once a chunk is written
        try:
            params = sampling_from_proto(request.sampling)
            params.max_tokens = max(1, params.max_tokens - len(resumed))
            engine_request = engine_request_from_proto(request, params, request_id, resumed)
            async for chunk in serve_generate(self.engine, engine_request, progress):
                chunk.owner = owner
                await self._write(request_id, owner, chunk)
                count += len(chunk.tokens)
                outcome = progress.finish_reason or outcome
        except (InvalidSamplingParams, InvalidRequestError) as exc:
            error = pb.GenerateChunk(
                request_id=request_id, finish_reason=pb.FINISH_REASON_ERROR, error=str(exc), owner=owner
            )
            await self._write(request_id, owner, error)
            outcome = "invalid"
        except asyncio.CancelledError:
            outcome = "lost" if request_id in self.lost else "cancelled"
            if outcome == "cancelled":
                final = pb.GenerateChunk(
                    request_id=request_id, finish_reason=pb.FINISH_REASON_ABORT, owner=owner
                )
                await self._write(request_id, owner, final)
        except Fenced:
            outcome = "lost"
            raise
        finally:
            span.set_attribute("gen_ai.usage.output_tokens", count)
            span.set_attribute("hybridgw.outcome", outcome)
            if outcome != "lost":  # its last chunk is out: the fence has done its job
                with contextlib.suppress(aioredis.RedisError, OSError):
                    await self.redis.delete(self.keys.fence(request_id))
            logger.info(
                json.dumps(
                    {
                        "event": "request",
                        "request_id": request_id,
                        "prompt_tokens": len(request.prompt_token_ids),
                        "resumed_tokens": len(resumed),
                        "completion_tokens": count,
                        "outcome": outcome,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                        "worker": self.name,
                    }
                )
            )

    def _signed(self, chunk: pb.GenerateChunk) -> bytes:
        return self.signer.sign(chunk).SerializeToString()

    async def _write(self, request_id: str, owner: str, chunk: pb.GenerateChunk) -> bytes:
        """Appended only while this turn owns the request (Fenced otherwise)."""
        return await self.fenced.write(request_id, owner, self._signed(chunk))

    async def _already_emitted(self, reply: str, fence_id: bytes) -> tuple[list[int], bool]:
        """The tokens the client got before this worker's fence, read as the gateway reads them
        (shared/reply_stream.py), and whether the request was finished already."""
        follower, tokens = ReplyFollower(), []
        for _, fields in await self.redis.xrange(reply, max=fence_id):
            chunk = pb.GenerateChunk()
            chunk.ParseFromString(fields[b"chunk"])
            counted = follower.accept(chunk)
            if counted is not None:
                tokens += [token.token_id for token in counted.tokens]
        return tokens, follower.finished

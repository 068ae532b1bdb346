"""The cloud pool over Redis: XADD to the request stream, read the request's reply stream, set the
cancel flag when the client goes away. The pool is one routing target; its state sums the live
workers' heartbeats."""

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from gateway.backends.base import BackendError, DirectChunks, Pending, start_polling
from gateway.router import NodeKind, NodeState
from shared.proto import inference_pb2 as pb
from shared.redis_keys import RedisKeys

logger = logging.getLogger("hybridgw.gateway")
READ_BLOCK_MS = 1000


class CloudBackend:
    def __init__(
        self, client: aioredis.Redis, keys: RedisKeys, models: frozenset[str], queue_bound: int = 256
    ):
        self.redis = client
        self.keys = keys
        self.state = NodeState("cloud", NodeKind.CLOUD, models, healthy=False, queue_bound=queue_bound)
        self._poller: asyncio.Task | None = None

    async def start(self) -> None:
        await self.poll_once()
        self._poller = start_polling(self.poll_once)

    async def close(self) -> None:
        if self._poller:
            self._poller.cancel()

    async def poll_once(self) -> None:
        try:
            workers = [key async for key in self.redis.scan_iter(match=self.keys.worker_pattern)]
            beats = [await self.redis.hget(key, "stats") for key in workers]
        except aioredis.RedisError:
            self.state.healthy = False
            return
        stats = [json.loads(beat) for beat in beats if beat]
        state = self.state
        state.healthy = bool(stats)
        state.num_running = sum(s.get("num_running", 0) for s in stats)
        state.num_waiting = sum(s.get("num_waiting", 0) for s in stats)
        state.max_running = max(1, sum(s.get("max_running", 0) for s in stats))
        state.kv_usage = max((s.get("kv_usage", 0.0) for s in stats), default=0.0)
        state.prefill_tokens_per_s = _mean_rate(stats, "prefill_tokens_per_s")
        state.decode_tokens_per_s = _mean_rate(stats, "decode_tokens_per_s")

    async def generate(
        self,
        request: pb.GenerateRequest,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        direct: DirectChunks | None = None,  # every chunk comes through the iterator
    ) -> AsyncIterator[list[pb.GenerateChunk]]:
        reply = self.keys.reply_stream(request.request_id)
        finished = False
        try:
            fields = {"request": request.SerializeToString(), **(trace_headers or {})}
            await self.redis.xadd(self.keys.request_stream, fields)
        except aioredis.RedisError as error:
            raise BackendError(f"cannot reach the cloud queue: {error}", 503) from None
        pending = Pending(self.state)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        last_id = "0-0"
        try:
            while not finished:
                if loop.time() > deadline:
                    raise BackendError("the cloud pool timed out", 504, retryable=False)
                entries = await self.redis.xread({reply: last_id}, block=READ_BLOCK_MS)
                ready = []
                for _, messages in entries or []:
                    for entry_id, fields in messages:
                        last_id = entry_id
                        chunk = pb.GenerateChunk()
                        chunk.ParseFromString(fields[b"chunk"])
                        if chunk.error:
                            raise BackendError(chunk.error, 400, retryable=False)
                        finished = chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED
                        ready.append(chunk)
                if ready:
                    pending.started()
                    yield ready
        finally:
            pending.started()
            if not finished:
                await self.redis.set(self.keys.cancel_flag(request.request_id), 1, ex=600)


def _mean_rate(stats: list[dict], name: str) -> float:
    """The workers' mean measured rate; 0 (unknown: the router assumes a default) if none has one."""
    rates = [s[name] for s in stats if s.get(name)]
    return sum(rates) / len(rates) if rates else 0.0

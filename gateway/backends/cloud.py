"""The cloud pool over Redis: XADD to the request stream, read the request's reply stream, set the
cancel flag when the client goes away. The pool is one routing target; its state sums the live
workers' heartbeats."""

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from gateway.backends.base import BackendError, DirectChunks, apply_report, start_polling
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
            queued = await self._num_queued()
        except aioredis.RedisError:
            self.state.healthy = False
            return
        stats = []
        for beat in filter(None, beats):
            try:
                stats.append(json.loads(beat))
            except ValueError:
                logger.warning("a cloud worker heartbeat is not JSON; skipped")
        self.state.healthy = bool(stats)
        apply_report(self.state, pool_stats(stats, queued))

    async def _num_queued(self) -> int:
        """Requests in the stream that no worker has taken yet (they count in no heartbeat)."""
        try:
            groups = await self.redis.xinfo_groups(self.keys.request_stream)
        except aioredis.ResponseError:  # no stream yet
            return 0
        name = self.keys.consumer_group
        for group in groups:
            group_name = group.get("name")
            if group_name in (name, name.encode()):
                return int(group.get("lag") or 0)
        return 0

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
                    yield ready
        finally:
            if not finished:
                await self.redis.set(self.keys.cancel_flag(request.request_id), 1, ex=600)


def pool_stats(heartbeats: list[dict], num_queued: int) -> pb.NodeStats:
    """The workers' heartbeats as one node: counts and capacity summed (plus the requests still
    in the queue), rates averaged, and the decode table of a pool of W workers as a worker's at
    batch b / W (the pool spreads its batch over them)."""
    stats = pb.NodeStats(kind="cloud")
    for beat in heartbeats:
        stats.num_running += int(beat.get("num_running", 0))
        stats.num_waiting += int(beat.get("num_waiting", 0))
        stats.max_running += int(beat.get("max_running", 0))
        stats.num_waiting_prompt_tokens += int(beat.get("num_waiting_prompt_tokens", 0))
        stats.kv_usage = max(stats.kv_usage, float(beat.get("kv_usage", 0.0)))
    stats.num_waiting += num_queued
    stats.prefill_tokens_per_s = _mean(heartbeats, "prefill_tokens_per_s")
    stats.decode_tokens_per_s = _mean(heartbeats, "decode_tokens_per_s")
    contexts = [int(beat["context_length"]) for beat in heartbeats if beat.get("context_length")]
    stats.context_length = min(contexts, default=0)
    seconds_by_batch: dict[int, list[float]] = {}
    for beat in heartbeats:
        for step in beat.get("decode_steps", []):
            seconds_by_batch.setdefault(int(step["batch_size"]), []).append(float(step["seconds"]))
    for batch_size, seconds in sorted(seconds_by_batch.items()):
        step = stats.decode_steps.add()
        step.batch_size, step.seconds = batch_size * len(heartbeats), sum(seconds) / len(seconds)
    return stats


def _mean(heartbeats: list[dict], name: str) -> float:
    """The workers' mean measured rate; 0 (unknown: the router assumes a default) if none has one."""
    rates = [float(beat[name]) for beat in heartbeats if beat.get(name)]
    return sum(rates) / len(rates) if rates else 0.0

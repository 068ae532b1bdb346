"""The cloud pool over Redis: XADD to the request stream, read the request's reply stream, set the
cancel flag when the client goes away. The pool is one routing target; its state sums the live
workers' heartbeats."""

import asyncio
import json
import logging

import redis.asyncio as aioredis

from gateway.backends.base import BackendError, ChunkSink, apply_report, start_polling
from gateway.backends.client_request import ClientRequest
from gateway.backends.cloud_pool import WorkerView, choose_worker, pool_stats, worker_views
from gateway.backends.redis_errors import UNREACHABLE, is_out_of_memory, out_of_memory
from gateway.backends.reply_reader import CANCEL_FLAG_TTL_S, ReplyReader
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from shared.chunk_signing import ChunkVerifier
from shared.proto import inference_pb2 as pb
from shared.redis_keys import RedisKeys

logger = logging.getLogger("hybridgw.gateway")


class CloudBackend:
    def __init__(
        self,
        client: aioredis.Redis,
        keys: RedisKeys,
        models: frozenset[str],
        queue_bound: int = 256,
        signing_secret: bytes | None = None,
    ):
        """`signing_secret`: chunks and heartbeats count only when their worker signed them
        (shared/chunk_signing.py); None: trusted as they are."""
        self.redis = client
        self.verifier = ChunkVerifier(signing_secret)
        self._unsigned: set[str] = set()  # workers whose heartbeats failed verification
        self.keys = keys
        self.state = NodeState("cloud", NodeKind.CLOUD, models, healthy=False, queue_bound=queue_bound)
        self._poller: asyncio.Task | None = None
        self.workers: dict[str, WorkerView] = {}  # live workers, by name, as of the last poll

    async def start(self) -> None:
        await self.poll_once()
        self._poller = start_polling(self.poll_once)

    async def close(self) -> None:
        if self._poller:
            self._poller.cancel()

    async def poll_once(self) -> None:
        try:
            keys = [key async for key in self.redis.scan_iter(match=self.keys.worker_pattern)]
            beats = [await self.redis.hgetall(key) for key in keys]
            names = [_text(key).removeprefix(self.keys.worker_heartbeat("")) for key in keys]
            queued = await self._num_queued(self.keys.request_stream)
            for name in names:
                queued += await self._num_queued(self.keys.direct_stream(name))
        except aioredis.RedisError:
            self.state.healthy = False
            return
        name_to_heartbeat = {}
        for name, fields in zip(names, beats, strict=True):
            beat = {_text(k): _text(v) for k, v in fields.items()}
            if not self.verifier.heartbeat(name, beat):
                if name not in self._unsigned:  # said once per name, not every poll
                    self._unsigned.add(name)
                    logger.warning("a heartbeat of %r is not signed by its worker; skipped", name)
                continue
            try:
                name_to_heartbeat[name] = json.loads(beat["stats"]) if beat.get("stats") else None
            except ValueError:
                logger.warning("a cloud worker heartbeat is not JSON; skipped")
        name_to_heartbeat = {name: beat for name, beat in name_to_heartbeat.items() if beat}
        self.workers = worker_views(name_to_heartbeat)
        self.state.healthy = bool(name_to_heartbeat)
        # one worker: one prefix cache; with several, two requests may land on different ones
        self.state.shares_prefix_blocks = len(name_to_heartbeat) == 1
        apply_report(self.state, pool_stats(list(name_to_heartbeat.values()), queued))

    async def _num_queued(self, stream: str) -> int:
        """Requests in the stream that no worker has taken yet (they count in no heartbeat)."""
        try:
            groups = await self.redis.xinfo_groups(stream)
        except aioredis.ResponseError:  # no stream yet
            return 0
        name = self.keys.consumer_group
        for group in groups:
            group_name = group.get("name")
            if group_name in (name, name.encode()):
                return int(group.get("lag") or 0)
        return 0

    async def run(
        self,
        request: pb.GenerateRequest,
        sink: ChunkSink,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        client: ClientRequest | None = None,
    ) -> None:
        reply = self.keys.reply_stream(request.request_id)
        worker = choose_worker(self.workers, request)
        stream = self.keys.direct_stream(worker.name) if worker else self.keys.request_stream
        try:
            fields = {"request": request.SerializeToString(), **(trace_headers or {})}
            entry_id = await self.redis.xadd(stream, fields)
        except aioredis.RedisError as error:
            if is_out_of_memory(error):
                raise out_of_memory("the request could not be queued") from None
            raise BackendError(f"cannot reach the cloud queue: {error}", 503, code=UNREACHABLE) from None
        if worker is not None:
            worker.num_directed += 1  # until the next heartbeat counts it
        verify = self.verifier.chunk if self.verifier.secret else None
        reader = ReplyReader(self.redis, self.keys, verify, request.request_id, (stream, entry_id))
        node_finished = False
        try:
            node_finished = await reader.read(sink, timeout_s)
        finally:
            await self._clean_up(request.request_id, reply, node_finished)

    async def _clean_up(self, request_id: str, reply: str, node_finished: bool) -> None:
        """Read to the end: nothing of the request is left in Redis; else its worker is told to
        stop. Never raises: a Redis failure here must not cut the client's response."""
        try:
            if node_finished:
                await self.redis.delete(reply, self.keys.fence(request_id))
            else:
                await self.redis.set(self.keys.cancel_flag(request_id), 1, ex=CANCEL_FLAG_TTL_S)
        except (aioredis.RedisError, OSError) as error:
            logger.warning(
                json.dumps(
                    {"event": "cloud_cleanup_failed", "request_id": request_id, "error": type(error).__name__}
                )
            )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

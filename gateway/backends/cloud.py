"""The cloud pool over Redis: XADD to the request stream, read the request's reply stream, set the
cancel flag when the client goes away. The pool is one routing target; its state sums the live
workers' heartbeats."""

import asyncio
import json
import logging

import redis.asyncio as aioredis

from gateway.backends.base import BackendError, ChunkSink, apply_report, start_polling
from gateway.backends.cloud_pool import WorkerView, choose_worker, pool_stats, worker_views
from gateway.client_fields import ClientRequest
from gateway.router import NodeKind, NodeState
from shared.chunk_signing import ChunkVerifier
from shared.proto import inference_pb2 as pb
from shared.redis_keys import RedisKeys
from shared.reply_stream import ReplyFollower, ReplyGap

logger = logging.getLogger("hybridgw.gateway")
CANCEL_FLAG_TTL_S = 60  # a worker checks flags every heartbeat (2 s); the flag is for it alone
READ_BLOCK_MS = 1000


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
            await self.redis.xadd(stream, fields)
        except aioredis.RedisError as error:
            raise BackendError(f"cannot reach the cloud queue: {error}", 503) from None
        if worker is not None:
            worker.num_directed += 1  # until the next heartbeat counts it
        node_finished = False
        try:
            node_finished = await self._read_reply(reply, sink, timeout_s)
        finally:
            if node_finished:  # read to the end: nothing of the request is left in Redis
                await self.redis.delete(reply)
            else:
                await self.redis.set(self.keys.cancel_flag(request.request_id), 1, ex=CANCEL_FLAG_TTL_S)

    async def _read_reply(self, reply: str, sink: ChunkSink, timeout_s: float) -> bool:
        """Puts the reply stream's chunks that count (shared/reply_stream.py: the current owner's,
        each token once) into `sink` until it is finished; True if the worker sent its last one."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        last_id, follower = "0-0", ReplyFollower(self.verifier.chunk if self.verifier.secret else None)
        while not sink.finished:
            if loop.time() > deadline:
                raise BackendError("the cloud pool timed out", 504, retryable=False)
            entries = await self.redis.xread({reply: last_id}, block=READ_BLOCK_MS)
            for _, messages in entries or []:
                for entry_id, fields in messages:
                    last_id = entry_id
                    chunk = pb.GenerateChunk()
                    chunk.ParseFromString(fields[b"chunk"])
                    try:
                        chunk = follower.accept(chunk)
                    except ReplyGap as gap:
                        raise BackendError(
                            f"the cloud pool lost tokens: {gap}", 502, retryable=False
                        ) from None
                    if chunk is None:
                        continue
                    if chunk.error:
                        raise BackendError(chunk.error, 400, retryable=False)
                    sink.put(chunk)
                    if chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED:
                        return True
                    if sink.finished:
                        return False
        return False


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

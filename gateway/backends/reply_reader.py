"""Reading one request's reply stream from the cloud pool, through Redis outages.

Chunks that count (shared/reply_stream.py: the current owner's, each token once) go into the
sink until the request is finished. When Redis goes away mid-stream the reader keeps trying
(with backoff, for up to OUTAGE_S); once Redis answers again, and whenever a read brings nothing,
it asks whether Redis still holds the request (its worker's fence key, or its queue entry); if
so it goes on from the last entry it read, so the client sees one unbroken stream. A request
that Redis lost (a restart without persistence) or an outage past OUTAGE_S is a retryable
BackendError: a stream with tokens out resumes on another node from the last token sent
(gateway/dispatch/choice_attempts.py), or ends with an error event. A request lost because Redis is out of
memory is named as such (gateway/backends/redis_errors.py), not as a restart.
"""

import asyncio

import redis.asyncio as aioredis

from gateway.backends.base import BackendError, ChunkSink
from gateway.backends.redis_errors import is_out_of_memory, lost_request, out_of_memory, unreachable
from shared.proto import inference_pb2 as pb
from shared.redis_keys import RedisKeys
from shared.reply_stream import ReplyFollower, ReplyGap

READ_BLOCK_MS = 1000
OUTAGE_S = 15.0  # how long a Redis outage may last before the request is given up here
CANCEL_FLAG_TTL_S = 60  # a worker checks flags every heartbeat (2 s); the flag is for it alone


class ReplyReader:
    def __init__(
        self, client: aioredis.Redis, keys: RedisKeys, verify, request_id: str, queued: tuple[str, bytes]
    ):
        """`queued`: (stream, entry id) of the request in the queue; `verify`: the chunk verifier
        (None: chunks trusted as they are)."""
        self.redis, self.keys, self.request_id, self.queued = client, keys, request_id, queued
        self.reply = keys.reply_stream(request_id)
        self.follower = ReplyFollower(verify)
        self.last_id = "0-0"

    async def read(self, sink: ChunkSink, timeout_s: float) -> bool:
        """True if the worker sent its last chunk."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not sink.finished:
            if loop.time() > deadline:
                raise BackendError("the cloud pool timed out", 504, retryable=False)
            for _, messages in await self._entries(deadline) or []:
                for entry_id, fields in messages:
                    self.last_id = entry_id
                    done = self._accept(fields, sink)
                    if done is not None:
                        return done
        return False

    def _accept(self, fields: dict, sink: ChunkSink) -> bool | None:
        """Puts a chunk that counts into the sink; True at the last chunk, False when the sink is
        done, None to read on."""
        chunk = pb.GenerateChunk()
        chunk.ParseFromString(fields[b"chunk"])
        try:
            chunk = self.follower.accept(chunk)
        except ReplyGap as gap:
            raise BackendError(f"the cloud pool lost tokens: {gap}", 502, retryable=False) from None
        if chunk is None:
            return None
        if chunk.error:
            raise BackendError(chunk.error, 400, retryable=False)
        sink.put(chunk)
        if chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED:
            return True
        return False if sink.finished else None

    async def _entries(self, deadline: float):
        """One XREAD, riding out a Redis outage; BackendError when the request is lost. The client
        reconnects on its own (a restart may show no error at all), so a read that brought nothing
        asks whether Redis still holds the request."""
        loop, outage_since, delay = asyncio.get_running_loop(), None, 0.05
        while True:
            try:
                entries = await self.redis.xread({self.reply: self.last_id}, block=READ_BLOCK_MS)
                if (outage_since is not None or not entries) and not await self._still_there():
                    raise await self._lost()
                return entries
            except aioredis.RedisError as error:
                now = loop.time()
                outage_since = outage_since if outage_since is not None else now
                if now - outage_since > OUTAGE_S or now > deadline:
                    raise unreachable(error) from None
                await asyncio.sleep(delay)
                delay = min(1.0, delay * 2)

    async def _lost(self) -> BackendError:
        """Why Redis no longer holds the request. A worker whose fence or chunk write Redis refused
        for want of memory gives the request up (it cannot even write an error chunk), so a write
        here tells that apart from a restart: the request's cancel flag (it is over either way)."""
        try:
            await self.redis.set(self.keys.cancel_flag(self.request_id), 1, ex=CANCEL_FLAG_TTL_S)
        except aioredis.RedisError as error:
            if is_out_of_memory(error):
                return out_of_memory("its worker could not write the reply")
        return lost_request()

    async def _still_there(self) -> bool:
        """Whether Redis still holds the request: its worker's fence, or its queue entry."""
        if await self.redis.exists(self.keys.fence(self.request_id)):
            return True
        stream, entry_id = self.queued
        return bool(await self.redis.xrange(stream, min=entry_id, max=entry_id, count=1))

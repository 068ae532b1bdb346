"""The request streams a cloud worker reads, all with the one consumer group: the shared stream
(any worker takes any request), its own direct stream (requests the gateway sent to it because
it holds their prompt's prefix in its prefix cache), and the direct stream of a worker whose
heartbeat expired (its requests would otherwise wait for it forever).

An entry stays pending until the worker that read it acknowledges it; a live worker keeps its
pending entries fresh (XCLAIM JUSTID), so only a dead worker's go idle and are claimed (XAUTOCLAIM).
A dead worker (no heartbeat) is forgotten once nothing of it is left: it leaves the consumer
group, its direct stream goes, and the worker directory no longer names it.
"""

import redis.asyncio as aioredis

from shared.redis_keys import RedisKeys


class WorkerStreams:
    def __init__(self, client: aioredis.Redis, keys: RedisKeys, name: str, claim_idle_ms: int):
        self.redis = client
        self.keys = keys
        self.name = name
        self.claim_idle_ms = claim_idle_ms
        self.own_direct = keys.direct_stream(name)

    async def ensure_group(self, stream: str) -> None:
        try:
            await self.redis.xgroup_create(stream, self.keys.consumer_group, id="0", mkstream=True)
        except aioredis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def setup(self) -> None:
        await self.ensure_group(self.keys.request_stream)
        await self.ensure_group(self.own_direct)
        await self.redis.hset(self.keys.worker_directory, self.name, "1")

    async def leave(self) -> None:
        """A worker that stopped (its entries all acknowledged) leaves the consumer group, so the
        group's consumers are the live workers, not every worker that ever ran."""
        for stream in (self.keys.request_stream, self.own_direct):
            await self.redis.xgroup_delconsumer(stream, self.keys.consumer_group, self.name)

    async def read(self, room: int, block_ms: int) -> list[tuple[str, bytes, dict]]:
        """New entries (stream, entry id, fields): this worker's direct ones first, then shared."""
        streams = {self.own_direct: ">", self.keys.request_stream: ">"}
        entries = await self.redis.xreadgroup(
            self.keys.consumer_group, self.name, streams, count=room, block=block_ms
        )
        found = []
        for stream, messages in entries or []:
            name = stream.decode() if isinstance(stream, bytes) else stream
            found += [(name, entry_id, fields) for entry_id, fields in messages]
        return found  # up to `room` per stream: every one delivered is served

    async def keep_fresh(self, stream_to_entry_ids: dict[str, list[bytes]]) -> set[bytes]:
        """Refresh the claim on our entries; returns those another worker claimed meanwhile (this
        one was paused past the claim time): the request is that worker's now."""
        lost: set[bytes] = set()
        for stream, entry_ids in stream_to_entry_ids.items():
            owners = await self._owners(stream, len(entry_ids))
            lost |= {e for e in entry_ids if owners.get(e, self.name) != self.name}
            mine = [e for e in entry_ids if owners.get(e) == self.name]
            if mine:
                await self.redis.xclaim(stream, self.keys.consumer_group, self.name, 0, mine, justid=True)
        return lost

    async def owns(self, stream: str, entry_id: bytes) -> bool:
        """Whether no other worker has claimed the entry (before we acknowledge it)."""
        pending = await self.redis.xpending_range(stream, self.keys.consumer_group, entry_id, entry_id, 1)
        return not pending or _text(pending[0]["consumer"]) == self.name

    async def _owners(self, stream: str, count: int) -> dict[bytes, str]:
        pending = await self.redis.xpending_range(
            stream, self.keys.consumer_group, "-", "+", max(64, 4 * count)
        )
        return {_id(p["message_id"]): _text(p["consumer"]) for p in pending}

    async def claim(self, room: int) -> list[tuple[str, bytes, dict]]:
        """Entries of dead workers: idle pending ones of the shared stream and of orphaned direct
        streams, and the never-read entries of orphaned direct streams."""
        found = await self._autoclaim(self.keys.request_stream, room)
        for key in await self.redis.hkeys(self.keys.worker_directory):
            owner = key.decode() if isinstance(key, bytes) else key
            if len(found) >= room or owner == self.name:
                continue
            if await self.redis.exists(self.keys.worker_heartbeat(owner)):
                continue
            stream = self.keys.direct_stream(owner)
            await self.ensure_group(stream)
            found += await self._autoclaim(stream, room - len(found))
            if len(found) < room:
                entries = await self.redis.xreadgroup(
                    self.keys.consumer_group, self.name, {stream: ">"}, count=room - len(found)
                )
                for _, messages in entries or []:
                    found += [(stream, entry_id, fields) for entry_id, fields in messages]
            if len(found) < room:  # everything of the dead worker's is taken: forget it
                await self._forget(owner)
        await self._forget_dead_consumers(self.keys.request_stream)
        return found

    async def _forget(self, owner: str) -> None:
        """A dead worker whose direct stream is drained: its stream, its directory entry and
        its consumer on the shared stream go (only once it has nothing pending there)."""
        stream = self.keys.direct_stream(owner)
        if await self.redis.xlen(stream) == 0:
            await self.redis.delete(stream)
            await self.redis.hdel(self.keys.worker_directory, owner)

    async def _forget_dead_consumers(self, stream: str) -> None:
        """Consumers of the group with nothing pending, idle past the claim time and no
        heartbeat: workers that crashed (a stopping worker leaves on its own)."""
        for consumer in await self.redis.xinfo_consumers(stream, self.keys.consumer_group):
            name = _text(consumer["name"])
            if name == self.name or consumer["pending"] or consumer["idle"] < self.claim_idle_ms:
                continue
            if not await self.redis.exists(self.keys.worker_heartbeat(name)):
                await self.redis.xgroup_delconsumer(stream, self.keys.consumer_group, name)

    async def _autoclaim(self, stream: str, count: int) -> list[tuple[str, bytes, dict]]:
        if count <= 0:
            return []
        _, claimed, _ = await self.redis.xautoclaim(
            stream, self.keys.consumer_group, self.name, self.claim_idle_ms, "0-0", count=count
        )
        return [(stream, entry_id, fields) for entry_id, fields in claimed]

    async def ack(self, stream: str, entry_id: bytes) -> None:
        """Done with the entry: acknowledged and deleted, so the stream holds only requests not
        yet finished (no prompt outlives its request in Redis)."""
        async with self.redis.pipeline(transaction=False) as pipe:  # one round trip, no MULTI
            await pipe.xack(stream, self.keys.consumer_group, entry_id).xdel(stream, entry_id).execute()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _id(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()

"""A worker's writes to a reply stream, each atomic with the check that the request is still its
own (one Lua script per write), so a worker paused past its claim and woken after another worker
took the request over (or finished it, and the gateway deleted the stream) writes nothing and
computes no more.

- `take`: the fence. Only while the request's queue entry is pending under this worker
  (XPENDING) does it name this turn the request's owner (`{prefix}cloud:fence:{request_id}`) and
  append the fence chunk; otherwise the request is someone else's.
- `write`: a chunk, appended only while the fence key still names this turn. Every write renews
  the reply stream's expiry (it never lives without one) and the fence's.
A write refused raises `Fenced`: the caller stops generating and acknowledges nothing.
"""

from shared.redis_keys import RedisKeys

TAKE = """
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #pending == 0 or pending[1][2] ~= ARGV[3] then return false end
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[7])
local id = redis.call('XADD', KEYS[3], '*', 'chunk', ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
return id
"""
WRITE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local id = redis.call('XADD', KEYS[2], '*', 'chunk', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return id
"""
FENCE_TTL_MS = 15 * 60 * 1000  # longer than any request may run (the gateway gives up at 10 min)


class Fenced(Exception):
    """The request is another worker's now (or finished): this one must stop."""


class FencedReply:
    def __init__(self, client, keys: RedisKeys, reply_ttl_s: int):
        self._take, self._write = client.register_script(TAKE), client.register_script(WRITE)
        self._keys, self._reply_ttl_ms = keys, reply_ttl_s * 1000

    async def take(
        self, stream: str, entry_id: bytes, consumer: str, request_id: str, owner: str, chunk: bytes
    ) -> bytes:
        """Append the fence chunk as this turn's owner; Fenced when the entry is not ours."""
        keys = [stream, self._keys.fence(request_id), self._keys.reply_stream(request_id)]
        group = self._keys.consumer_group
        args = [group, entry_id, consumer, owner, chunk, self._reply_ttl_ms, FENCE_TTL_MS]
        entry = await self._take(keys=keys, args=args)
        if entry is None:
            raise Fenced(request_id)
        return entry

    async def write(self, request_id: str, owner: str, chunk: bytes) -> bytes:
        keys = [self._keys.fence(request_id), self._keys.reply_stream(request_id)]
        entry = await self._write(keys=keys, args=[owner, chunk, self._reply_ttl_ms, FENCE_TTL_MS])
        if entry is None:
            raise Fenced(request_id)
        return entry

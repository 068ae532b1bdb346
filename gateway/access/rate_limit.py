"""Per-key limits on requests and tokens per minute: token buckets that refill continuously.

`RedisRateLimiter` keeps the buckets in Redis and updates them with one Lua script (atomic across
every gateway replica); `LocalRateLimiter` is the embedded default for a single process.
"""

import json
import logging
import time
from dataclasses import dataclass

import redis.asyncio as aioredis

from gateway.access.api_keys import ApiKey

WINDOW_S = 60.0
logger = logging.getLogger("hybridgw.gateway")

# KEYS[1..2]: request and token buckets; ARGV: now, rpm, tpm, tokens (0 limit: unlimited).
# Returns {allowed (1/0), retry_after_ms}. Nothing is taken unless both buckets have room.
_LUA = """
local now = tonumber(ARGV[1])
local function level(key, capacity)
  if capacity <= 0 then return nil end
  local state = redis.call('HMGET', key, 'level', 'ts')
  local lvl = tonumber(state[1]) or capacity
  local ts = tonumber(state[2]) or now
  lvl = math.min(capacity, lvl + (now - ts) * capacity / 60000)
  return lvl
end
local wants = {1, tonumber(ARGV[4])}
local caps = {tonumber(ARGV[2]), tonumber(ARGV[3])}
local levels = {}
local wait = 0
for i = 1, 2 do
  levels[i] = level(KEYS[i], caps[i])
  if levels[i] ~= nil and levels[i] < wants[i] then
    wait = math.max(wait, math.ceil((wants[i] - levels[i]) * 60000 / caps[i]))
  end
end
if wait > 0 then return {0, wait} end
for i = 1, 2 do
  if levels[i] ~= nil then
    redis.call('HSET', KEYS[i], 'level', levels[i] - wants[i], 'ts', now)
    redis.call('PEXPIRE', KEYS[i], 120000)
  end
end
return {1, 0}
"""


@dataclass(frozen=True, slots=True)
class LimitResult:
    allowed: bool
    retry_after_s: float = 0.0


class LocalRateLimiter:
    def __init__(self):
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}

    async def acquire(self, key: ApiKey, tokens: int, end_user: str | None = None) -> LimitResult:
        now = time.monotonic()
        bucket = key.bucket(end_user)
        wants = (("requests", key.requests_per_minute, 1), ("tokens", key.tokens_per_minute, tokens))
        levels, wait = {}, 0.0
        for kind, capacity, amount in wants:
            if not capacity:
                continue
            level, stamp = self._buckets.get((bucket, kind), (float(capacity), now))
            level = min(capacity, level + (now - stamp) * capacity / WINDOW_S)
            levels[kind] = level
            if level < amount:
                wait = max(wait, (amount - level) * WINDOW_S / capacity)
        if wait > 0:
            return LimitResult(False, wait)
        for kind, capacity, amount in wants:
            if capacity:
                self._buckets[(bucket, kind)] = (levels[kind] - amount, now)
        return LimitResult(True)


class RedisRateLimiter:
    """Shared limits in Redis; while Redis cannot be reached, each gateway enforces the same
    limits in process (a request is never refused, or let through unlimited, for an outage)."""

    def __init__(self, client: aioredis.Redis, prefix: str):
        self.redis = client
        self.prefix = prefix
        self._script = client.register_script(_LUA)
        self._fallback = LocalRateLimiter()

    async def acquire(self, key: ApiKey, tokens: int, end_user: str | None = None) -> LimitResult:
        if not key.requests_per_minute and not key.tokens_per_minute:
            return LimitResult(True)
        bucket = key.bucket(end_user)
        buckets = [f"{self.prefix}ratelimit:{bucket}:{kind}" for kind in ("requests", "tokens")]
        now_ms = int(time.time() * 1000)
        try:
            allowed, wait_ms = await self._script(
                keys=buckets, args=[now_ms, key.requests_per_minute or 0, key.tokens_per_minute or 0, tokens]
            )
        except (aioredis.RedisError, OSError):
            logger.warning(json.dumps({"event": "rate_limit_fallback", "reason": "redis unreachable"}))
            return await self._fallback.acquire(key, tokens, end_user)
        return LimitResult(bool(allowed), int(wait_ms) / 1000)

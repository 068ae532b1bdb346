"""The privacy ledger in a Redis stream, for deployments: one stream per gateway replica
(`{prefix}privacy-ledger:{ledger_id}`, each its own chain), trimmed to a retention period by the
stream ids' times (XADD ... MINID). The gateway chains and signs each record as it decides
(gateway/privacy/ledger.py); a writer task appends them in order, and keeps them while Redis is
away (up to MAX_PENDING, then the oldest unwritten are dropped and counted, never the request).
"""

import asyncio
import collections
import logging
import time

import orjson
from redis.exceptions import RedisError

from gateway.privacy.ledger import GENESIS, PrivacyLedger

logger = logging.getLogger("hybridgw.gateway")
MAX_PENDING = 100_000
FIELD = b"record"


def stream_key(prefix: str, ledger_id: str) -> str:
    return f"{prefix}privacy-ledger:{ledger_id}"


class RedisSink:
    def __init__(self, client, stream: str, retention_s: float | None):
        self._client, self.stream, self._retention_s = client, stream, retention_s
        self._pending: collections.deque[bytes] = collections.deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._loop = asyncio.get_running_loop()
        self.dropped = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="privacy-ledger")

    def write(self, line: bytes) -> None:
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            self.dropped += 1
        self._pending.append(line)
        self._loop.call_soon_threadsafe(self._wake.set)

    async def _run(self) -> None:
        delay = 0.05
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                try:
                    await self._append(self._pending[0])
                except RedisError as error:
                    logger.warning("privacy ledger: Redis append failed (%s); retrying", type(error).__name__)
                    await asyncio.sleep(delay)
                    delay = min(2.0, delay * 2)
                    continue
                self._pending.popleft()
                delay = 0.05

    async def _append(self, line: bytes) -> None:
        trim = {}
        if self._retention_s:
            trim = {"minid": f"{int((time.time() - self._retention_s) * 1000)}-0", "approximate": False}
        await self._client.xadd(self.stream, {FIELD: line}, **trim)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """Wait (bounded) until every record so far is in Redis."""
        deadline = time.monotonic() + timeout_s
        while self._pending and time.monotonic() < deadline:
            self._wake.set()
            await asyncio.sleep(0.01)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def open_redis_ledger(client, stream: str, key: bytes, retention_s: float | None) -> PrivacyLedger:
    """A ledger continuing the stream's chain (its last record's seq and hash)."""
    last = await client.xrevrange(stream, count=1)
    seq, prev = 0, GENESIS
    if last:
        record = orjson.loads(last[0][1][FIELD])
        seq, prev = int(record["seq"]), str(record["hash"])
    sink = RedisSink(client, stream, retention_s)
    sink.start()
    return PrivacyLedger(sink, key, seq, prev)


async def stream_lines(client, stream: str, batch: int = 1000) -> list[bytes]:
    """Every record in the stream, oldest first."""
    lines, start = [], "-"
    while True:
        entries = await client.xrange(stream, min=start, count=batch)
        lines += [fields[FIELD] for _, fields in entries]
        if len(entries) < batch:
            return lines
        last = entries[-1][0].decode() if isinstance(entries[-1][0], bytes) else entries[-1][0]
        start = f"({last}"

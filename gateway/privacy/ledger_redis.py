"""The privacy ledger in a Redis stream, for deployments: one stream per gateway replica
(`{prefix}privacy-ledger:{ledger_id}`, each its own chain), trimmed to a retention period by the
stream ids' times (XADD ... MINID) when one is configured.

A record counts once Redis acknowledged it (the records of one group commit go in one
MULTI/EXEC: all or none); Redis unreachable or out of memory refuses the requests (fail closed).
One writer per stream: a replica holds `{prefix}privacy-ledger-owner:{ledger_id}` (refreshed
while it runs) and a second one on the same id is refused with the holder's name. The default
ledger id is the host's name and an id persisted beside the ledger's key, so replicas never share
one by accident. Redis must persist the stream (AOF, `appendfsync always` or `everysec`):
without it a restart loses records, and `hybridgw audit verify` reports the gap.
"""

import asyncio
import contextlib
import datetime
import logging
import os
import secrets
import socket
from pathlib import Path

import orjson
from redis.exceptions import RedisError

from gateway.privacy.ledger import PrivacyLedger, signer_for
from gateway.privacy.ledger_file import LedgerLockedError, LedgerWriteError
from gateway.privacy.ledger_keys import write_atomically
from gateway.privacy.ledger_records import Head, head_of

logger = logging.getLogger("hybridgw.gateway")
FIELD = b"record"
OWNER_TTL_MS = 15_000
# keeps the claim only while it is this replica's (a restarted Redis may have let another take it)
REFRESH = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
)


def stream_key(prefix: str, ledger_id: str) -> str:
    return f"{prefix}privacy-ledger:{ledger_id}"


def owner_key(prefix: str, ledger_id: str) -> str:
    return f"{prefix}privacy-ledger-owner:{ledger_id}"


def default_ledger_id(state_folder: Path) -> str:
    """`<host>-<id>`: the id made once and kept in `<state_folder>/privacy-ledger.replica-id`."""
    path = state_folder / "privacy-ledger.replica-id"
    if not path.exists():
        state_folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            write_atomically(path, secrets.token_hex(4).encode(), 0o644, replace=False)
    return f"{socket.gethostname()}-{path.read_text().strip()}"


def redis_write_error(stream: str, error: RedisError) -> LedgerWriteError:
    text = str(error)
    if "OOM" in text.split(" ", 1)[0]:
        reason = "Redis is out of memory (maxmemory reached)"
    else:
        reason = f"Redis: {type(error).__name__}" + (f": {text}" if text else "")
    return LedgerWriteError(f"cannot write the privacy ledger {stream}: {reason}", reason)


class RedisSink:
    """Appends records to the stream while this replica holds the stream's claim."""

    def __init__(self, client, stream: str, owner: str, retention_s: float | None):
        self._client, self.stream, self._owner = client, stream, owner
        self._retention_s = retention_s
        self._holder = f"pid {os.getpid()} on {socket.gethostname()} since {_now_iso()}"
        self._lost: str | None = None
        self._task: asyncio.Task | None = None

    def describe(self) -> str:
        return f"redis stream {self.stream}"

    async def claim(self) -> None:
        if not await self._client.set(self._owner, self._holder, nx=True, px=OWNER_TTL_MS):
            holder = await self._client.get(self._owner)
            holder = holder.decode() if isinstance(holder, bytes) else holder
            raise LedgerLockedError(
                f"the privacy ledger {self.stream} is in use by {holder}; give each gateway replica "
                "its own [privacy] ledger_id (the default is the host's name and a persisted id)"
            )
        self._task = asyncio.create_task(self._keep_claim(), name="privacy-ledger-claim")

    async def _keep_claim(self) -> None:
        while True:
            await asyncio.sleep(OWNER_TTL_MS / 3000)
            try:
                if not await self._client.eval(REFRESH, 1, self._owner, self._holder, OWNER_TTL_MS):
                    if await self._client.set(self._owner, self._holder, nx=True, px=OWNER_TTL_MS):
                        continue
                    self._lost = f"cannot write the privacy ledger {self.stream}: another gateway took it"
                    logger.error(
                        orjson.dumps({"event": "privacy_ledger_claim_lost", "stream": self.stream}).decode()
                    )
                else:
                    self._lost = None
            except RedisError:
                continue  # the next append reports Redis's state

    def rotation_due(self, now: float) -> bool:
        return False

    async def append(self, lines: list[bytes], rotate: bool, now: float) -> None:
        if self._lost is not None:
            raise LedgerWriteError(self._lost, "another gateway took this replica's ledger id")
        trim = {}
        if self._retention_s:
            trim = {"minid": f"{int((now - self._retention_s) * 1000)}-0", "approximate": False}
        pipe = self._client.pipeline(transaction=True)
        for line in lines:
            pipe.xadd(self.stream, {FIELD: line}, **trim)
        try:
            await pipe.execute()
        except RedisError as error:
            raise redis_write_error(self.stream, error) from None

    def commit(self, lines: list[bytes], rotate: bool, now: float) -> None:
        raise AssertionError("a Redis ledger is written from the event loop (append)")

    async def aclose(self) -> None:
        """The claim given back (another replica may take the id at once)."""
        if self._task is not None:
            self._task.cancel()
        with contextlib.suppress(RedisError):
            if await self._client.get(self._owner) == self._holder.encode():
                await self._client.delete(self._owner)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def open_redis_ledger(
    client, prefix: str, ledger_id: str, key_file: Path, retention_s: float | None
) -> PrivacyLedger:
    """A ledger continuing the stream's chain (its last record's seq and hash), its claim held."""
    stream = stream_key(prefix, ledger_id)
    sink = RedisSink(client, stream, owner_key(prefix, ledger_id), retention_s)
    await sink.claim()
    try:
        last = await client.xrevrange(stream, count=1)
        record = orjson.loads(last[0][1][FIELD]) if last else None
        ledger = PrivacyLedger(
            sink, signer_for(key_file, record, sink.describe()), head_of(record) if record else Head()
        )
        await ledger.start_chain()
    except BaseException:
        await sink.aclose()
        raise
    return ledger


async def stream_batches(client, stream: str, batch: int = 1000):
    """The stream's records, oldest first, `batch` at a time."""
    start = "-"
    while True:
        entries = await client.xrange(stream, min=start, count=batch)
        yield [fields[FIELD] for _, fields in entries]
        if len(entries) < batch:
            return
        last = entries[-1][0].decode() if isinstance(entries[-1][0], bytes) else entries[-1][0]
        start = f"({last}"


async def ledger_ids(client, prefix: str) -> list[str]:
    """The ledger ids of every stream under `prefix`."""
    found = [
        k.decode() if isinstance(k, bytes) else k async for k in client.scan_iter(f"{prefix}privacy-ledger:*")
    ]
    return sorted(k.removeprefix(f"{prefix}privacy-ledger:") for k in found)


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")

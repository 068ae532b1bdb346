"""The privacy ledger: one tamper-evident record per routing decision, stored before the request
reaches any node, so that an operator can prove which requests were private and that none of
them ran off-prem (record format: gateway/privacy/ledger_records.py).

`append` returns only once the record is stored (in a file: written whole and fsynced; in Redis:
acknowledged); a record that cannot be stored raises LedgerUnavailableError and its request is
refused (fail closed). Records that arrive while one write is under way are written together,
with one fsync (group commit). The chain moves on only when a write succeeded: a failed record
leaves no trace but the `outage` record written when the ledger is writable again.
"""

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from gateway.privacy.ledger_file import FileSink, LedgerWriteError, last_record
from gateway.privacy.ledger_keys import (
    LedgerKeyError,
    Signer,
    create_signer,
    load_signer,
    public_hex,
    public_path,
    write_atomically,
)
from gateway.privacy.ledger_records import Head, chain, genesis_entry, head_of


def default_ledger_path() -> Path:
    """`$HYBRIDGW_HOME/privacy-ledger.jsonl`, else `$XDG_STATE_HOME/hybridgw/...` or ~/.local/state."""
    home = os.environ.get("HYBRIDGW_HOME")
    if home:
        return Path(home) / "privacy-ledger.jsonl"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "hybridgw" / "privacy-ledger.jsonl"


class LedgerUnavailableError(Exception):
    """The decision could not be recorded: the request must not run (its message names why,
    `reason` only the cause)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


@dataclass(slots=True)
class Outage:
    cause: str
    since: float
    num_refused: int = 0


class PrivacyLedger:
    """Chains and signs records and stores them in order through its sink (FileSink, or the
    Redis stream's: gateway/privacy/ledger_redis.py). `outage`: set while records cannot be
    stored (the gateway is not ready then), cleared by the first write that succeeds."""

    def __init__(self, sink, signer: Signer, head: Head, now: Callable[[], float] = time.time):
        """`now`: the clock records are stamped with and days are told by (a day's rotation)."""
        self._sink, self._signer, self._head, self._now = sink, signer, head, now
        self._waiting: list[tuple[list[dict], asyncio.Future]] = []
        self._writer: asyncio.Task | None = None
        self.outage: Outage | None = None
        self.num_writes = 0  # group commits (each one fsync in a file)

    @classmethod
    def open_file(
        cls,
        path: Path,
        key_file: Path,
        fsync: bool = True,
        rotate_bytes: int | None = None,
        daily: bool = False,
        now: Callable[[], float] = time.time,
    ) -> "PrivacyLedger":
        """The file's ledger, its chain continued; a torn last line cut and sealed; a new ledger
        begun with its genesis record (and its key created)."""
        sink = FileSink(Path(path), fsync, rotate_bytes, daily)
        try:
            last = last_record(Path(path))
            signer = signer_for(Path(key_file), last, sink.describe())
            ledger = cls(sink, signer, head_of(last) if last else Head(), now)
            entries = [] if last else [genesis_entry(ledger._signer)]
            if sink.torn is not None:
                torn = sink.torn
                entries.append(
                    {
                        "event": "recovered",
                        "cut_offset": torn.offset,
                        "cut_bytes": torn.num_bytes,
                        "cut_sha256": torn.sha256,
                    }
                )
            if entries:
                ledger.write_now(entries)
        except BaseException:
            sink.close()
            raise
        return ledger

    @property
    def head(self) -> Head:
        return self._head

    def describe(self) -> str:
        return self._sink.describe()

    async def append(self, decision: dict, payload: bytes) -> str:
        """Stores `decision` (request_id, tenant, private, reason, kinds, stages, node, node_kind,
        on_prem, outcome) with the payload's keyed hash; returns its receipt id once stored.
        LedgerUnavailableError when it cannot be stored."""
        entry = {"event": "decision", **decision, "payload_hmac": self._signer.payload_hmac(payload)}
        receipts = await self._enqueue([entry])
        return receipts[0]

    async def start_chain(self) -> None:
        """A new ledger's genesis record (naming its public key)."""
        if self._head.seq == 0:
            await self._enqueue([genesis_entry(self._signer)])

    async def probe(self) -> bool:
        """Whether the ledger is writable: while in an outage, tries to store its `outage` record."""
        if self.outage is None:
            return True
        try:
            await self._enqueue([])
        except LedgerUnavailableError:
            return False
        return True

    async def _enqueue(self, entries: list[dict]) -> list[str]:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((entries, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain(), name="privacy-ledger")
        return await future

    async def _drain(self) -> None:
        """Writes whatever waits, all of it at once, until nothing waits."""
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                receipts = await self._store([e for entries, _ in batch for e in entries], len(batch))
            except LedgerUnavailableError as error:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            for entries, future in batch:
                mine, receipts = receipts[: len(entries)], receipts[len(entries) :]
                if not future.done():
                    future.set_result(mine)

    async def _store(self, entries: list[dict], num_requests: int) -> list[str]:
        now = self._now()
        rotate = self._sink.rotation_due(now)
        prefix = self._prefix(rotate)
        records, head = chain(self._head, self._signer, prefix + entries, now)
        try:
            await self._sink.append([orjson.dumps(r) for r in records], rotate, now)
        except LedgerWriteError as error:
            if self.outage is None:
                self.outage = Outage(str(error), now)
            self.outage.num_refused += sum(1 for e in entries if e["event"] == "decision")
            raise LedgerUnavailableError(str(error), error.reason) from None
        self._head, self.outage = head, None
        self.num_writes += 1
        return [r["receipt"] for r in records[len(prefix) :]]

    def _prefix(self, rotate: bool) -> list[dict]:
        """The records that go before the next ones: a new segment's, the end of an outage."""
        prefix = [{"event": "segment"}] if rotate else []
        if self.outage is not None:
            outage = self.outage
            prefix.append(
                {
                    "event": "outage",
                    "cause": outage.cause,
                    "since": outage.since,
                    "refused": outage.num_refused,
                }
            )
        return prefix

    def write_now(self, entries: list[dict]) -> None:
        """`entries` stored at once, on this thread (a file ledger opening, or the CLI)."""
        now = self._now()
        records, head = chain(self._head, self._signer, entries, now)
        self._sink.commit([orjson.dumps(r) for r in records], False, now)
        self._head = head

    def rotate_key(self, key_file: Path) -> str:
        """A new signing key: a `key_rotation` record signed by the old key names it, then the
        key file holds it (`<key>.next` until then: a start completes a rotation cut short).
        Returns the new key's id."""
        new = Signer.generate()
        pending = key_file.with_name(key_file.name + ".next")
        write_atomically(pending, new.private_pem(), 0o600, replace=True)
        entry = {"event": "key_rotation", "new_key_id": new.key_id, "new_public_key": public_hex(new.public)}
        self.write_now([entry])
        _finish_rotation(key_file)
        self._signer = new
        return new.key_id

    async def flush(self) -> None:
        """Wait until every record handed over is stored or refused."""
        while self._writer is not None and not self._writer.done():
            await asyncio.wait({self._writer})

    async def aclose(self) -> None:
        """Every record handed over stored or refused, then the sink closed (its lock or claim
        given back)."""
        await self.flush()
        await self._sink.aclose()

    def close(self) -> None:
        self._sink.close()


def signer_for(key_file: Path, last: dict | None, where: str) -> Signer:
    """The signing key of a ledger whose last record is `last`: created for a new ledger, else
    the key its records are signed with, or LedgerKeyError (never a new key in its place: no
    single key would verify the ledger afterwards)."""
    if last is None:
        return load_signer(key_file) if key_file.exists() else create_signer(key_file)
    if "key_id" not in last and "new_key_id" not in last:
        raise LedgerKeyError(
            f"the privacy ledger {where} was written by an earlier hybridgw (HMAC-signed records, "
            "which only the key's holder can verify); move it and its key aside, where they stay "
            "as they were, and start again: a new ledger is signed with an Ed25519 key"
        )
    expected = head_of(last).key_id
    if not key_file.exists() and not key_file.with_name(key_file.name + ".next").exists():
        raise LedgerKeyError(
            f"the privacy ledger {where} holds {last['seq']} records signed by key {expected}, but "
            f"its signing key {key_file} is missing; restore the key (a new one would leave no single "
            "key that verifies the ledger), or move the ledger aside to start a new one"
        )
    signer = load_signer(key_file) if key_file.exists() else None
    if signer is None or signer.key_id != expected:
        pending = key_file.with_name(key_file.name + ".next")
        if pending.exists() and load_signer(pending).key_id == expected:
            _finish_rotation(key_file)
            return load_signer(key_file)
        found = signer.key_id if signer is not None else "none"
        raise LedgerKeyError(
            f"the signing key {key_file} is key {found}, but the privacy ledger {where} is signed "
            f"by key {expected}; restore that key"
        )
    return signer


def _finish_rotation(key_file: Path) -> None:
    pending = key_file.with_name(key_file.name + ".next")
    signer = load_signer(pending)
    write_atomically(public_path(key_file), signer.public_pem(), 0o644, replace=True)
    os.replace(pending, key_file)

"""The privacy ledger in files: JSON lines, appended whole or not at all, fsynced before a record
counts; one writer (an exclusive lock, its holder named in `<ledger>.lock`); a torn last line
left by a crash cut at start (the ledger seals the cut with a `recovered` record); rotation by
size or day into numbered segments (`<ledger>.000001`, ...) that carry the chain on.
"""

import asyncio
import contextlib
import datetime
import errno
import fcntl
import hashlib
import logging
import os
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson

from gateway.privacy.ledger_keys import fsync_folder
from shared.errors import LedgerError

logger = logging.getLogger("hybridgw.gateway")
TAIL_BYTES = 1 << 20  # a record is a few hundred bytes; the last whole line is in this much


class LedgerWriteError(LedgerError):
    """A record could not be stored; the message names the ledger and the cause, `reason` only
    the cause (what a client is told)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class LedgerLockedError(LedgerError):
    """Another process writes this ledger."""


class LedgerCorruptError(LedgerError):
    """The ledger's last whole line is not a record: not a torn write, so not cut."""


@dataclass(frozen=True, slots=True)
class TornTail:
    """What a crash mid-write left after the last whole line, cut at start."""

    offset: int
    num_bytes: int
    sha256: str


def segments(path: Path) -> list[Path]:
    """The ledger's files, oldest first: rotated segments, then the live file."""
    rotated = [p for p in path.parent.glob(f"{path.name}.[0-9]*") if p.suffix[1:].isdigit()]
    return [*sorted(rotated, key=lambda p: int(p.suffix[1:])), path]


def last_record(path: Path) -> dict | None:
    """The last record of the ledger's files (the live one or, when empty, the last segment)."""
    for part in reversed(segments(path)):
        line = _last_line(part)
        if line:
            try:
                return orjson.loads(line)
            except orjson.JSONDecodeError:
                raise LedgerCorruptError(
                    f"the privacy ledger {part}: its last whole line is not a record; "
                    "run `hybridgw audit verify` on it"
                ) from None
    return None


def _last_line(path: Path) -> bytes:
    if not path.exists():
        return b""
    with open(path, "rb") as file:
        size = file.seek(0, os.SEEK_END)
        file.seek(max(0, size - TAIL_BYTES))
        data = file.read()
    return data[: data.rfind(b"\n") + 1].rstrip(b"\n").rsplit(b"\n", 1)[-1]


class FileSink:
    """The live file, locked; `commit` appends lines whole (a failed write is cut back) and
    fsyncs (when `fsync`); `torn`: what was cut at open."""

    def __init__(self, path: Path, fsync: bool = True, rotate_bytes: int | None = None, daily: bool = False):
        self.path, self._fsync = Path(path), fsync
        self._rotate_bytes, self._daily = rotate_bytes, daily
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _take_lock(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            self.torn = self._cut_torn_tail()
            self._size = os.fstat(self._fd).st_size
            self._day = _first_day(self.path)
        except BaseException:
            os.close(self._fd)
            os.close(self._lock)
            raise
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="privacy-ledger")

    def describe(self) -> str:
        return str(self.path)

    def _cut_torn_tail(self) -> TornTail | None:
        with open(self.path, "rb") as file:
            size = file.seek(0, os.SEEK_END)
            start = max(0, size - TAIL_BYTES)
            file.seek(start)
            data = file.read()
        whole = data.rfind(b"\n") + 1 if b"\n" in data else (0 if start == 0 else None)
        if whole is None:
            raise LedgerCorruptError(
                f"the privacy ledger {self.path}: no whole line in its last {TAIL_BYTES} bytes"
            )
        last = data[:whole].rstrip(b"\n").rsplit(b"\n", 1)[-1]
        if last:
            try:
                orjson.loads(last)
            except orjson.JSONDecodeError:
                raise LedgerCorruptError(
                    f"the privacy ledger {self.path}: its last whole line is not a record; "
                    "run `hybridgw audit verify` on it"
                ) from None
        if start + whole == size:
            return None
        cut = data[whole:]
        os.ftruncate(self._fd, start + whole)
        os.fsync(self._fd)
        torn = TornTail(start + whole, len(cut), hashlib.sha256(cut).hexdigest())
        record = {"event": "privacy_ledger_torn_write_cut", "ledger": str(self.path), "offset": torn.offset}
        logger.warning(orjson.dumps({**record, "bytes": torn.num_bytes}).decode())
        return torn

    def rotation_due(self, now: float) -> bool:
        if self._size == 0:
            return False
        if self._rotate_bytes is not None and self._size >= self._rotate_bytes:
            return True
        return self._daily and self._day is not None and _day(now) != self._day

    def commit(self, lines: list[bytes], rotate: bool, now: float) -> None:
        """Append `lines` whole, fsynced, or none of them (LedgerWriteError); first into a new
        segment when `rotate`."""
        if rotate:
            self._rotate()
        data = b"".join(line + b"\n" for line in lines)
        start = self._size
        try:
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            if self._fsync:
                os.fsync(self._fd)
        except OSError as error:
            self._cut_back(start)
            raise _write_error(self.path, error) from None
        self._size = start + len(data)
        if self._day is None:
            self._day = _day(now)

    def _cut_back(self, size: int) -> None:
        """The file as it was before a failed write (a record is whole or absent)."""
        try:
            os.ftruncate(self._fd, size)
        except OSError as error:  # the next start cuts what is left as a torn tail
            logger.error(
                orjson.dumps({"event": "privacy_ledger_cut_failed", "error": error.strerror}).decode()
            )

    def _rotate(self) -> None:
        """The live file becomes the next numbered segment and a new, empty one takes its place."""
        numbers = [int(p.suffix[1:]) for p in segments(self.path)[:-1]]
        target = self.path.with_name(f"{self.path.name}.{max(numbers, default=0) + 1:06d}")
        fresh = self.path.with_name(f".{self.path.name}.new")
        try:
            os.fsync(self._fd)
            fd = os.open(fresh, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC, 0o640)
        except OSError as error:
            raise _write_error(self.path, error) from None
        try:
            os.link(self.path, target)
            try:
                os.replace(fresh, self.path)
            except OSError:
                target.unlink()
                raise
        except OSError as error:
            os.close(fd)
            fresh.unlink(missing_ok=True)
            raise _write_error(self.path, error) from None
        os.close(self._fd)
        self._fd, self._size, self._day = fd, 0, None
        with contextlib.suppress(OSError):  # the renames are durable at the next fsync of the data
            fsync_folder(self.path.parent)

    async def append(self, lines: list[bytes], rotate: bool, now: float) -> None:
        """`commit` on the sink's own thread (an fsync never blocks the event loop)."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self.commit, lines, rotate, now)

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self._executor.shutdown()
        os.close(self._fd)
        os.close(self._lock)


def _write_error(path: Path, error: OSError) -> LedgerWriteError:
    reason = f"{error.strerror} ({errno.errorcode.get(error.errno or 0, 'error')})"
    return LedgerWriteError(f"cannot write the privacy ledger {path}: {reason}", reason)


def _day(now: float) -> datetime.date:
    return datetime.datetime.fromtimestamp(now, datetime.UTC).date()


def _first_day(path: Path) -> datetime.date | None:
    with open(path, "rb") as file:
        first = file.readline()
    return _day(orjson.loads(first)["time"]) if first.endswith(b"\n") else None


def _take_lock(path: Path) -> int:
    """An exclusive lock on `<ledger>.lock`, held while the ledger is open; the file names its
    holder, and a second writer is refused with that name."""
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise LedgerLockedError(
            f"the privacy ledger {path} is in use by {holder}; one ledger file takes one gateway "
            "(give each gateway its own [privacy] ledger)"
        ) from None
    os.ftruncate(fd, 0)
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {now}\n".encode(), 0)
    return fd

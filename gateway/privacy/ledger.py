"""The privacy ledger: one tamper-evident record per routing decision, so that an operator can
prove which requests were private and that none of them ran off-prem.

A record holds the request id, tenant, time, the decision (private or not, why, the kinds found,
the detector stages and their versions), the node and whether it is on-prem, and a keyed hash
(HMAC-SHA256) of the outbound payload: never the text. Records are hash-chained (each holds the
SHA-256 of the one before) and signed with HMAC-SHA256 under a key the gateway holds, so editing,
removing or reordering a record breaks the chain or a signature, and forging one needs the key.
The file is append-only JSON lines; `hybridgw audit verify` checks it (`verify` below).
"""

import hashlib
import hmac
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

GENESIS = "0" * 64


def default_ledger_path() -> Path:
    """`$HYBRIDGW_HOME/privacy-ledger.jsonl`, else `$XDG_STATE_HOME/hybridgw/...` or ~/.local/state."""
    home = os.environ.get("HYBRIDGW_HOME")
    if home:
        return Path(home) / "privacy-ledger.jsonl"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "hybridgw" / "privacy-ledger.jsonl"


def load_or_create_key(path: Path) -> bytes:
    """The signing key (32 random bytes, hex in a 0600 file), created on first use."""
    if path.exists():
        return bytes.fromhex(path.read_text().strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(key.hex() + "\n")
    return key


def _digest(fields: dict) -> str:
    return hashlib.sha256(orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _signature(key: bytes, record_hash: str) -> str:
    return hmac.new(key, record_hash.encode(), hashlib.sha256).hexdigest()


class FileSink:
    """An append-only file, flushed per record."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")  # noqa: SIM115 - held for the gateway's life

    def write(self, line: bytes) -> None:
        self._file.write(line + b"\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class PrivacyLedger:
    """Builds, chains and signs records and hands each to its sink (a file, or a Redis stream:
    gateway/privacy/ledger_redis.py); thread-safe. `seq` and `prev`: the chain's last record (a
    restarted gateway continues its chain)."""

    def __init__(self, sink, key: bytes, seq: int = 0, prev: str = GENESIS):
        self._sink, self._key = sink, key
        self._payload_key = hmac.new(key, b"payload", hashlib.sha256).digest()
        self._lock = threading.Lock()
        self._seq, self._prev = seq, prev

    @classmethod
    def open_file(cls, path: Path, key: bytes) -> "PrivacyLedger":
        seq, prev = _tail(Path(path))
        return cls(FileSink(path), key, seq, prev)

    def append(self, decision: dict, payload: bytes) -> str:
        """Records `decision` (request_id, tenant, private, reason, kinds, stages, node, on_prem,
        outcome) with the payload's keyed hash; returns the receipt id."""
        payload_hmac = hmac.new(self._payload_key, payload, hashlib.sha256).hexdigest()
        with self._lock:
            self._seq += 1
            fields = {
                "seq": self._seq,
                "time": time.time(),
                **decision,
                "payload_hmac": payload_hmac,
                "prev": self._prev,
            }
            record_hash = _digest(fields)
            receipt = f"pr_{record_hash[:32]}"
            record = {
                **fields,
                "receipt": receipt,
                "hash": record_hash,
                "sig": _signature(self._key, record_hash),
            }
            self._sink.write(orjson.dumps(record))
            self._prev = record_hash
        return record["receipt"]

    async def flush(self) -> None:
        """Wait (bounded) until every record is stored (a file sink stores each at once)."""
        flush = getattr(self._sink, "flush", None)
        if flush is not None:
            await flush()

    def close(self) -> None:
        self._sink.close()


def _tail(path: Path) -> tuple[int, str]:
    """(seq, hash) of the file's last record, or (0, GENESIS)."""
    if not path.exists() or path.stat().st_size == 0:
        return 0, GENESIS
    with open(path, "rb") as file:
        file.seek(max(0, path.stat().st_size - 65536))
        last = file.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    record = orjson.loads(last)
    return int(record["seq"]), str(record["hash"])


@dataclass
class Verification:
    records: int = 0
    problems: list[str] = field(default_factory=list)  # each names the record
    private_off_prem: list[str] = field(default_factory=list)  # receipts

    @property
    def intact(self) -> bool:
        return not self.problems


def verify(path: Path, key: bytes) -> Verification:
    """A ledger file: every record checked, the first one the start of its chain."""
    with open(path, "rb") as file:
        return verify_lines(file, key, GENESIS)


def verify_lines(lines, key: bytes, first_prev: str | None) -> Verification:
    """Recompute every record's hash, check its signature and its link to the one before.
    `first_prev`: what the first record must follow (GENESIS for a whole chain; None where older
    records expired under a retention limit, as in a trimmed Redis stream)."""
    result, prev, seq = Verification(), first_prev, None
    for line_number, line in enumerate(lines, 1):
        where = f"line {line_number}"
        try:
            record = orjson.loads(line)
            fields = {k: v for k, v in record.items() if k not in ("receipt", "hash", "sig")}
            where = f"record seq {record['seq']} (line {line_number}, receipt {record.get('receipt')})"
            problem = _problem(record, fields, key, prev, seq)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            problem = f"unreadable ({type(error).__name__})"
            record = None
        if problem:
            result.problems.append(f"{where}: {problem}")
        result.records += 1
        if record is not None:
            prev, seq = record.get("hash"), record.get("seq")
            if record.get("private") and record.get("node") and not record.get("on_prem"):
                result.private_off_prem.append(str(record.get("receipt")))
    return result


def _problem(record: dict, fields: dict, key: bytes, prev: str | None, seq: int | None) -> str:
    if _digest(fields) != record["hash"]:
        return "its contents do not match its hash (edited)"
    if not hmac.compare_digest(_signature(key, record["hash"]), record["sig"]):
        return "its signature is not the gateway's"
    if record["receipt"] != f"pr_{record['hash'][:32]}":
        return "its receipt id does not match its hash"
    if prev is not None and record["prev"] != prev:
        return "it does not follow the record before it (removed or reordered records)"
    if seq is not None and record["seq"] != seq + 1:
        return f"its sequence number follows {seq} (records removed)"
    return ""

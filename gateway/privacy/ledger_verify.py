"""Checking a privacy ledger, one line at a time (memory flat in the ledger's size): every
record's hash, its signature under the key in force, its link to the record before, its sequence
number; key rotations followed; recoveries and outages reported as such, never as tampering;
an exported head (`hybridgw audit export-head`) found in the chain with its hash."""

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from gateway.privacy.ledger_file import segments
from gateway.privacy.ledger_keys import key_id, public_from_hex, signature_holds
from gateway.privacy.ledger_records import GENESIS, SEALS, digest


@dataclass
class Verification:
    records: int = 0
    problems: list[str] = field(default_factory=list)  # each names the record
    gaps: list[str] = field(default_factory=list)  # records missing before the first one present
    private_off_prem: list[str] = field(default_factory=list)  # receipts
    notes: list[str] = field(default_factory=list)  # recoveries, outages, rotations, a start mid-chain
    first: dict | None = None
    last: dict | None = None

    @property
    def intact(self) -> bool:
        return not self.problems and not self.gaps


class ChainCheck:
    """Fed the ledger's lines oldest first. `public`: the key the first record must be signed
    with (None: the key the ledger's genesis record names, which proves integrity, not origin).
    `retention_s`: a chain may start mid-way only where its first missing record would have
    expired under it (a Redis stream trimmed by time). `head`: an exported head that must be in
    the chain."""

    def __init__(
        self, public: Ed25519PublicKey | None, retention_s: float | None = None, head: dict | None = None
    ):
        self.result = Verification()
        self._public, self._retention_s, self._head = public, retention_s, head
        self._prev: str | None = None
        self._seq: int | None = None
        self._head_seen = False

    def feed(self, line: bytes, where: str) -> None:
        line = line.strip()
        if not line:
            return
        try:
            record = orjson.loads(line)
            where = f"record seq {record['seq']} ({where}, receipt {record.get('receipt')})"
            problem = self._problem(record)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            problem, record = f"unreadable ({type(error).__name__})", None
        self.result.records += 1
        if problem:
            self.result.problems.append(f"{where}: {problem}")
        if record is not None:
            self._after(record, where)

    def _problem(self, record: dict) -> str:
        fields = {k: v for k, v in record.items() if k not in SEALS}
        if digest(fields) != record["hash"]:
            return "its contents do not match its hash (edited)"
        if record["receipt"] != f"pr_{record['hash'][:32]}":
            return "its receipt id does not match its hash"
        if self.result.first is None:
            problem = self._start(record)
            if problem:
                return problem
        elif record["prev"] != self._prev:
            return "it does not follow the record before it (removed or reordered records)"
        elif record["seq"] != self._seq + 1:
            return f"its sequence number follows {self._seq} (records removed)"
        if self._public is None or record["key_id"] != key_id(self._public):
            return f"it is signed by key {record['key_id']}, not the key in force"
        if not signature_holds(self._public, record["hash"], record["sig"]):
            return "its signature does not hold (forged)"
        return ""

    def _start(self, record: dict) -> str:
        """The first record: the chain's start, or a start mid-chain that must be explained."""
        self.result.first = record
        if record.get("event") == "genesis" and record["prev"] == GENESIS and record["seq"] == 1:
            named = public_from_hex(record["public_key"])
            if self._public is None:
                self._public = named
                self.result.notes.append(
                    "signatures checked against the key the ledger names itself; "
                    "--public-key proves who signed it"
                )
            elif key_id(named) != key_id(self._public):
                return f"the ledger names key {key_id(named)}, not the given public key"
            return ""
        if self._public is None:
            return "the ledger does not start with its genesis record and no --public-key was given"
        prev_time = record.get("prev_time")
        expired = self._retention_s is not None and (
            prev_time is None or prev_time < time.time() - self._retention_s
        )
        if not expired:
            why = "no retention is configured" if self._retention_s is None else "within the retention"
            self.result.gaps.append(
                f"records 1 to {record['seq'] - 1} are missing before record seq {record['seq']} "
                f"({why}): lost (a Redis restart without persistence?) or removed"
            )
            return ""
        self.result.notes.append(
            f"starts at record seq {record['seq']} (older records expired under retention)"
        )
        return ""

    def _after(self, record: dict, where: str) -> None:
        self._prev, self._seq = record.get("hash"), record.get("seq")
        self.result.last = record
        event = record.get("event")
        if event == "key_rotation":
            self._public = public_from_hex(record["new_public_key"])
            self.result.notes.append(f"{where}: the signing key rotated to {record['new_key_id']}")
        elif event == "recovered":
            self.result.notes.append(
                f"{where}: RECOVERED at start: a torn write of {record['cut_bytes']} bytes at offset "
                f"{record['cut_offset']} was cut (a crash mid-write; never acknowledged)"
            )
        elif event == "outage":
            self.result.notes.append(
                f"{where}: the ledger was not writable from {record['since']} ({record['cause']}); "
                f"{record['refused']} requests refused"
            )
        elif (
            event == "decision" and record.get("private") and record.get("node") and not record.get("on_prem")
        ):
            self.result.private_off_prem.append(str(record.get("receipt")))
        if self._head is not None and record.get("seq") == self._head["seq"]:
            self._head_seen = True
            if record.get("hash") != self._head["hash"]:
                self.result.problems.append(f"{where}: it is not the exported head (its hash differs)")

    def finish(self) -> Verification:
        if self._head is not None and not self._head_seen:
            self.result.problems.append(
                f"the exported head (seq {self._head['seq']}, hash {self._head['hash'][:16]}...) is "
                "not in the ledger: records up to it were removed"
            )
        return self.result


def file_lines(path: Path) -> Iterator[tuple[bytes, str]]:
    """Every line of the ledger at `path` (its rotated segments, then the live file), and where."""
    for part in segments(path):
        if part.exists():
            with open(part, "rb") as file:
                for line_number, line in enumerate(file, 1):
                    yield line, f"{part.name} line {line_number}"


def verify_file(path: Path, check: ChainCheck) -> Verification:
    for line, where in file_lines(path):
        check.feed(line, where)
    return check.finish()

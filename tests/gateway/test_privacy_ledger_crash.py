"""The privacy ledger through a crash and an operator's mistakes: a torn last line is cut at
start, logged with the file's path and sealed by a `recovered` record (verify reports it as such,
never as tampering); a key file left empty, missing or replaced stops the start with a clear
error; a second writer is refused with the holder's name; files rotate with the chain carried
on; verify's memory stays flat in the ledger's size."""

import datetime
import itertools
import json
import logging
import os
import tracemalloc

import orjson
import pytest

from gateway.privacy.ledger import PrivacyLedger
from gateway.privacy.ledger_file import LedgerLockedError, segments
from gateway.privacy.ledger_keys import LedgerKeyError, create_signer
from gateway.privacy.ledger_verify import ChainCheck, verify_file
from hybridgw.main import main
from tests.fixtures.small_disk import SmallDisk

DECISION = {"request_id": "r", "tenant": "t", "private": False, "node": "edge-a", "on_prem": True}


async def _appended(path, key_file, num_records: int, **options) -> None:
    ledger = PrivacyLedger.open_file(path, key_file, **options)
    for _ in range(num_records):
        await ledger.append(DECISION, b"payload")
    await ledger.aclose()


def _records(path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


async def test_a_torn_last_line_is_cut_sealed_and_reported_as_a_recovery(tmp_path, caplog, capsys):
    path, key_file = tmp_path / "ledger.jsonl", tmp_path / "ledger.key"
    await _appended(path, key_file, 3)
    whole = path.read_bytes()
    torn = whole.splitlines(keepends=True)[-1][:331]  # a crash in the middle of a record
    path.write_bytes(whole + torn)
    with caplog.at_level(logging.WARNING, "hybridgw.gateway"):
        await _appended(path, key_file, 1)
    logged = [json.loads(r.message) for r in caplog.records if "torn" in r.message]
    assert logged == [
        {"event": "privacy_ledger_torn_write_cut", "ledger": str(path), "offset": len(whole), "bytes": 331}
    ]
    records = _records(path)
    assert path.read_bytes().startswith(whole) and [r["event"] for r in records[4:]] == [
        "recovered",
        "decision",
    ]
    assert (records[4]["cut_offset"], records[4]["cut_bytes"]) == (len(whole), 331)
    assert main(["audit", "verify", "--ledger", str(path), "--public-key", f"{key_file}.pub"]) == 0
    out = capsys.readouterr().out
    assert "RECOVERED at start: a torn write of 331 bytes at offset" in out and "TAMPERED" not in out


async def test_a_key_file_empty_missing_or_another_stops_the_start(tmp_path):
    path, key_file = tmp_path / "ledger.jsonl", tmp_path / "ledger.key"
    key_file.write_bytes(b"")  # a start interrupted while creating it (before keys were atomic)
    with pytest.raises(LedgerKeyError, match=f"signing key {key_file} is empty"):
        PrivacyLedger.open_file(path, key_file)
    key_file.unlink()
    await _appended(path, key_file, 1)
    signed_by = _records(path)[0]["key_id"]
    key_file.unlink()
    with pytest.raises(
        LedgerKeyError, match=f"holds 2 records signed by key {signed_by}, but its signing key"
    ):
        PrivacyLedger.open_file(path, key_file)
    assert not key_file.exists()  # never a new key in its place
    create_signer(key_file)
    with pytest.raises(LedgerKeyError, match=f"is signed by key {signed_by}; restore that key"):
        PrivacyLedger.open_file(path, key_file)


def test_a_key_is_created_whole_or_not_at_all(tmp_path):
    disk = SmallDisk(tmp_path / "small")
    try:
        disk.fill()
        with pytest.raises(OSError):
            create_signer(disk.folder / "ledger.key")
        assert sorted(p.name for p in disk.folder.iterdir() if p.name != "filler") in ([], ["ledger.key.pub"])
        assert not (disk.folder / "ledger.key").exists()
    finally:
        disk.close()


async def test_a_second_writer_is_refused_with_the_holders_name(tmp_path):
    path, key_file = tmp_path / "ledger.jsonl", tmp_path / "ledger.key"
    first = PrivacyLedger.open_file(path, key_file)
    try:
        with pytest.raises(LedgerLockedError, match=f"ledger {path} is in use by pid {os.getpid()} on "):
            PrivacyLedger.open_file(path, key_file)
        assert main(["audit", "rotate-key", "--ledger", str(path), "--key-file", str(key_file)]) == 1
    finally:
        await first.aclose()
    await _appended(path, key_file, 1)  # the lock is given back with the ledger


async def test_files_rotate_by_size_and_the_chain_goes_on(tmp_path):
    path, key_file = tmp_path / "ledger.jsonl", tmp_path / "ledger.key"
    await _appended(path, key_file, 12, rotate_bytes=2000)
    parts = segments(path)
    assert [p.name for p in parts[:2]] == ["ledger.jsonl.000001", "ledger.jsonl.000002"] and len(parts) >= 3
    for before, after in itertools.pairwise(parts):
        first = _records(after)[0]
        assert (first["event"], first["prev"]) == ("segment", _records(before)[-1]["hash"])
    result = verify_file(path, ChainCheck(None))
    assert result.intact and result.records == sum(len(_records(p)) for p in parts)


async def test_verify_reads_one_line_at_a_time(tmp_path):
    path, key_file = tmp_path / "ledger.jsonl", tmp_path / "ledger.key"
    await _appended(path, key_file, 3000, fsync=False)
    assert path.stat().st_size > 1_500_000
    tracemalloc.start()
    result = verify_file(path, ChainCheck(None))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.intact and result.records == 3001 and peak < 200_000


class Clock:
    """The ledger's clock, moved by the test (the ledger's `now`): a day passes in no time."""

    def __init__(self, at: datetime.datetime):
        self.at = at.timestamp()

    def __call__(self) -> float:
        return self.at


async def test_files_rotate_at_the_day_boundary_and_the_chain_goes_on(tmp_path, capsys):
    path, key_file = tmp_path / "ledger.jsonl", tmp_path / "ledger.key"
    clock = Clock(datetime.datetime(2026, 12, 7, 23, 59, 59, tzinfo=datetime.UTC))
    ledger = PrivacyLedger.open_file(path, key_file, daily=True, now=clock)
    await ledger.append(DECISION, b"payload")
    clock.at += 0.5  # 23:59:59.5: the same day, the same file
    await ledger.append(DECISION, b"payload")
    assert segments(path) == [path]
    clock.at += 0.5  # midnight UTC
    await ledger.append(DECISION, b"payload")
    await ledger.aclose()
    first, live = segments(path)
    assert first.name == "ledger.jsonl.000001"
    before, after = _records(first), _records(live)
    assert [r["event"] for r in before] == ["genesis", "decision", "decision"]
    assert [r["event"] for r in after] == ["segment", "decision"]
    assert after[0]["prev"] == before[-1]["hash"] and after[0]["seq"] == before[-1]["seq"] + 1
    assert {r["time"] for r in after} == {datetime.datetime(2026, 12, 8, tzinfo=datetime.UTC).timestamp()}
    assert main(["audit", "verify", "--ledger", str(path), "--public-key", f"{key_file}.pub"]) == 0
    assert capsys.readouterr().out == (
        f"{path}: 5 records, chain intact; private requests that ran off-prem: 0\n"
    )

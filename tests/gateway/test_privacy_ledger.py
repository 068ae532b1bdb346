"""The privacy ledger: every routing decision is a signed, chained record; `hybridgw audit verify`
proves the chain and that no private request ran off-prem, names a record someone edited,
removed, reordered or forged, and proves with only the public key and an exported head that
nothing up to the head was removed."""

import json

import aiohttp
import orjson

from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.privacy.ledger import PrivacyLedger
from gateway.privacy.ledger_keys import Signer, load_public_key, public_path
from gateway.privacy.ledger_records import Head, chain, digest, genesis_entry
from gateway.privacy.ledger_verify import ChainCheck, verify_file
from hybridgw.main import main
from tests.fixtures.gateway_app import Gateway, edge_config

PII = [{"role": "user", "content": "Patient Jane Doe, MRN 00123456, diagnosed with HIV. Summarize."}]


def _decision(private: bool, node: str | None, on_prem: bool, tenant: str = "t") -> dict:
    return {
        "request_id": f"r-{node}",
        "tenant": tenant,
        "private": private,
        "reason": "detected" if private else "clean",
        "kinds": ["person_health"] if private else [],
        "stages": {"patterns": "patterns-2"},
        "node": node,
        "node_kind": "edge" if on_prem else "cloud",
        "on_prem": on_prem,
        "outcome": "dispatched",
    }


async def _ledger(tmp_path, decisions) -> tuple:
    """The ledger file, its public key, the decisions' receipts."""
    path = tmp_path / "ledger.jsonl"
    ledger = PrivacyLedger.open_file(path, tmp_path / "ledger.jsonl.key")
    receipts = [await ledger.append(d, f"Patient Jane Doe {i}".encode()) for i, d in enumerate(decisions)]
    await ledger.aclose()
    return path, load_public_key(public_path(tmp_path / "ledger.jsonl.key")), receipts


def verify(path, public):
    return verify_file(path, ChainCheck(public))


def _lines(path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _write(path, records: list[dict]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


async def test_records_chain_sign_and_hold_no_text(tmp_path):
    decisions = [
        _decision(True, "edge-a", True),
        _decision(False, "cloud", False),
        _decision(True, None, False),
    ]
    path, public, receipts = await _ledger(tmp_path, decisions)
    genesis, *records = _lines(path)
    assert (genesis["seq"], genesis["event"], genesis["prev"]) == (1, "genesis", "0" * 64)
    assert [r["seq"] for r in records] == [2, 3, 4] and [r["receipt"] for r in records] == receipts
    assert records[0]["prev"] == genesis["hash"] and records[2]["prev"] == records[1]["hash"]
    assert records[1]["prev_time"] == records[0]["time"]
    assert b"Jane Doe" not in path.read_bytes() and len(records[0]["payload_hmac"]) == 64
    result = verify(path, public)
    assert (result.records, result.problems, result.gaps, result.private_off_prem) == (4, [], [], [])
    again = PrivacyLedger.open_file(path, tmp_path / "ledger.jsonl.key")  # a restart continues
    await again.append(_decision(False, "cloud", False), b"x")
    await again.aclose()
    assert _lines(path)[4]["prev"] == records[2]["hash"] and verify(path, public).intact


async def test_verify_names_the_edited_removed_reordered_or_forged_record(tmp_path):
    path, public, _ = await _ledger(tmp_path, [_decision(i % 2 == 0, "edge-a", True) for i in range(5)])
    records = _lines(path)
    edited = [dict(r) for r in records]
    edited[2]["private"] = True
    _write(path, edited)
    assert [p.split(":")[0] for p in verify(path, public).problems] == [
        f"record seq 3 (ledger.jsonl line 3, receipt {records[2]['receipt']})"
    ]
    _write(path, records[:1] + records[2:])  # the second removed
    problems = verify(path, public).problems
    assert len(problems) == 1 and problems[0].startswith("record seq 3 (ledger.jsonl line 2")
    assert "does not follow" in problems[0]
    _write(path, [records[0], records[2], records[1], *records[3:]])
    assert len(verify(path, public).problems) == 3
    forger = Signer.generate()  # edits a record, hashes it again and signs it with its own key
    fields = {k: v for k, v in records[2].items() if k not in ("receipt", "hash", "sig")}
    fields["private"] = True
    forged = {**fields, "receipt": f"pr_{digest(fields)[:32]}", "hash": digest(fields)}
    forged["sig"] = forger.sign(forged["hash"])
    following = dict(records[3], prev=forged["hash"])  # and the next record's link, and so on
    _write(path, [*records[:2], forged, following])
    problems = verify(path, public).problems
    assert problems[0].endswith("its signature does not hold (forged)") and "edited" in problems[1]
    whole = _forged_ledger(forger, len(records))  # a whole new ledger under the forger's key
    _write(path, whole)
    assert verify(path, None).intact  # consistent in itself...
    assert verify(path, public).problems[0].endswith("not the given public key")  # ...not ours


def _forged_ledger(forger: Signer, num_records: int) -> list[dict]:
    entries = [genesis_entry(forger)] + [{"event": "decision", **_decision(False, "x", True)}] * (
        num_records - 1
    )
    return chain(Head(), forger, entries, 1.0)[0]


async def test_a_private_request_off_prem_fails_verification(tmp_path, capsys):
    path, _, receipts = await _ledger(
        tmp_path, [_decision(True, "edge-a", True), _decision(True, "cloud-1", False)]
    )
    key = str(public_path(tmp_path / "ledger.jsonl.key"))
    assert main(["audit", "verify", "--ledger", str(path), "--public-key", key]) == 1
    out = capsys.readouterr().out
    assert f"PRIVATE OFF-PREM {receipts[1]}" in out and "3 records, chain intact" in out
    assert main(["audit", "report", "--ledger", str(path), "--since", "2000-01-01", "--tenant", "t"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["decisions"], summary["private"], summary["private_off_prem"]) == (2, 2, 1)
    assert summary["by_kind"] == {"person_health": 2}


async def test_an_exported_head_proves_nothing_up_to_it_was_removed(tmp_path, capsys):
    path, _, _ = await _ledger(tmp_path, [_decision(False, "edge-a", True)] * 3)
    key = str(public_path(tmp_path / "ledger.jsonl.key"))
    assert main(["audit", "export-head", "--ledger", str(path)]) == 0
    head = json.loads(capsys.readouterr().out)
    assert (head["seq"], head["hash"]) == (4, _lines(path)[-1]["hash"])
    (tmp_path / "head.json").write_text(json.dumps(head))
    again = PrivacyLedger.open_file(path, tmp_path / "ledger.jsonl.key")
    await again.append(_decision(False, "edge-a", True), b"later")
    await again.aclose()
    args = [
        "audit",
        "verify",
        "--ledger",
        str(path),
        "--public-key",
        key,
        "--head",
        str(tmp_path / "head.json"),
    ]
    assert main(args) == 0
    _write(path, _lines(path)[:2])  # cut back to before the head: a chain intact in itself
    assert main(args) == 1
    assert "the exported head (seq 4, hash" in capsys.readouterr().out


async def test_a_rotated_key_is_named_by_a_record_the_old_key_signs(tmp_path, capsys):
    path, _, _ = await _ledger(tmp_path, [_decision(False, "edge-a", True)])
    key_file = tmp_path / "ledger.jsonl.key"
    first_public = tmp_path / "first.pub"
    first_public.write_bytes(public_path(key_file).read_bytes())
    assert main(["audit", "rotate-key", "--ledger", str(path)]) == 0
    rotation = _lines(path)[-1]
    assert rotation["event"] == "key_rotation" and rotation["key_id"] != rotation["new_key_id"]
    again = PrivacyLedger.open_file(path, key_file)  # the gateway signs with the new key
    await again.append(_decision(False, "edge-a", True), b"x")
    await again.aclose()
    assert _lines(path)[-1]["key_id"] == rotation["new_key_id"]
    capsys.readouterr()
    assert main(["audit", "verify", "--ledger", str(path), "--public-key", str(first_public)]) == 0
    assert f"the signing key rotated to {rotation['new_key_id']}" in capsys.readouterr().out


async def test_the_gateway_records_each_decision_and_answers_with_its_receipt(
    tmp_path, model_path, edge_node, redis_url, redis_keys, capsys
):
    ledger = tmp_path / "ledger.jsonl"
    config = edge_config(model_path, edge_node, privacy_ledger=str(ledger))
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:
        body = {"model": "tiny", "messages": PII, "max_tokens": 2}
        async with session.post(f"{gw.url}/v1/chat/completions", json=body) as response:
            assert response.status == 200
            receipt = response.headers["X-Hybridgw-Privacy-Receipt"]
    cloud_only = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
        privacy_ledger=str(ledger),
    )
    async with (
        Gateway(cloud_only) as gw,
        aiohttp.ClientSession() as session,
        session.post(f"{gw.url}/v1/chat/completions", json=body) as response,
    ):
        assert response.status == 503
        assert response.headers["X-Hybridgw-Privacy-Receipt"] == _lines(ledger)[-1]["receipt"]
    _, first, second = _lines(ledger)
    assert (first["receipt"], first["private"], first["node"], first["on_prem"]) == (
        receipt,
        True,
        "edge-a",
        True,
    )
    assert "person_health" in first["kinds"] and first["stages"]["free_text"]
    assert (second["private"], second["node"], second["outcome"]) == (True, None, "unavailable")
    assert main(["audit", "verify", "--ledger", str(ledger)]) == 0
    assert "3 records, chain intact; private requests that ran off-prem: 0" in capsys.readouterr().out

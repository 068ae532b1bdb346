"""The privacy ledger: every routing decision is a signed, chained record; `hybridgw audit verify`
proves the chain and that no private request ran off-prem, and names a record someone edited,
removed or reordered."""

import asyncio
import json

import aiohttp
import orjson

from gateway.config import GatewayConfig, ModelEntry
from gateway.privacy.ledger import PrivacyLedger, load_or_create_key, verify
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


def _ledger(tmp_path, decisions) -> tuple:
    path = tmp_path / "ledger.jsonl"
    key = load_or_create_key(tmp_path / "ledger.jsonl.key")
    ledger = PrivacyLedger.open_file(path, key)
    receipts = [ledger.append(d, f"Patient Jane Doe {i}".encode()) for i, d in enumerate(decisions)]
    ledger.close()
    return path, key, receipts


def _lines(path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _write(path, records: list[dict]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def test_records_chain_sign_and_hold_no_text(tmp_path):
    decisions = [
        _decision(True, "edge-a", True),
        _decision(False, "cloud", False),
        _decision(True, None, False),
    ]
    path, key, receipts = _ledger(tmp_path, decisions)
    records = _lines(path)
    assert [r["seq"] for r in records] == [1, 2, 3] and [r["receipt"] for r in records] == receipts
    assert records[1]["prev"] == records[0]["hash"] and records[2]["prev"] == records[1]["hash"]
    assert b"Jane Doe" not in path.read_bytes() and len(records[0]["payload_hmac"]) == 64
    result = verify(path, key)
    assert (result.records, result.problems, result.private_off_prem) == (3, [], [])
    again = PrivacyLedger.open_file(path, key)  # a restart continues the chain
    again.append(_decision(False, "cloud", False), b"x")
    again.close()
    assert _lines(path)[3]["prev"] == records[2]["hash"] and verify(path, key).intact


def test_verify_names_the_edited_removed_or_reordered_record(tmp_path):
    path, key, _ = _ledger(tmp_path, [_decision(i % 2 == 0, "edge-a", True) for i in range(5)])
    records = _lines(path)
    edited = [dict(r) for r in records]
    edited[2]["private"] = False
    _write(path, edited)
    assert [p.split(":")[0] for p in verify(path, key).problems] == [
        f"record seq 3 (line 3, receipt {records[2]['receipt']})"
    ]
    _write(path, records[:1] + records[2:])  # the second removed
    problems = verify(path, key).problems
    assert (
        len(problems) == 1
        and problems[0].startswith("record seq 3 (line 2")
        and "does not follow" in problems[0]
    )
    _write(path, [records[0], records[2], records[1], *records[3:]])
    assert len(verify(path, key).problems) == 3
    _write(path, records)
    assert "signature" in verify(path, b"another key" * 3).problems[0]


def test_a_private_request_off_prem_fails_verification(tmp_path, capsys):
    path, _, receipts = _ledger(
        tmp_path, [_decision(True, "edge-a", True), _decision(True, "cloud-1", False)]
    )
    assert main(["audit", "verify", "--ledger", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"PRIVATE OFF-PREM {receipts[1]}" in out and "chain intact" in out
    assert main(["audit", "report", "--ledger", str(path), "--since", "2000-01-01", "--tenant", "t"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["decisions"], summary["private"], summary["private_off_prem"]) == (2, 2, 1)
    assert summary["by_kind"] == {"person_health": 2}


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
        assert response.status == 503 and "X-Hybridgw-Privacy-Receipt" not in response.headers
    first, second = _lines(ledger)
    assert (first["receipt"], first["private"], first["node"], first["on_prem"]) == (
        receipt,
        True,
        "edge-a",
        True,
    )
    assert "person_health" in first["kinds"] and first["stages"]["free_text"]
    assert (second["private"], second["node"], second["outcome"]) == (True, None, "unavailable")
    assert main(["audit", "verify", "--ledger", str(ledger)]) == 0
    assert "2 records, chain intact; private requests that ran off-prem: 0" in capsys.readouterr().out


async def test_a_redis_stream_ledger_chains_trims_to_its_retention_and_verifies(
    tmp_path, redis_url, redis_keys, capsys
):
    from gateway.privacy.ledger_redis import open_redis_ledger, stream_key
    from shared import redis_client

    client = redis_client.connect(redis_url)
    stream = stream_key(redis_keys.prefix, "replica-1")
    key = load_or_create_key(tmp_path / "ledger.key")
    try:
        ledger = await open_redis_ledger(client, stream, key, None)
        for i in range(3):
            ledger.append(_decision(i == 0, "edge-a", True), b"text")
        await ledger.flush()
        ledger.close()
        args = [
            "audit",
            "verify",
            "--redis",
            redis_url,
            "--prefix",
            redis_keys.prefix,
            "--ledger-id",
            "replica-1",
        ]
        args += ["--key-file", str(tmp_path / "ledger.key")]
        assert (
            await asyncio.to_thread(main, args) == 0 and "3 records, chain intact" in capsys.readouterr().out
        )
        again = await open_redis_ledger(client, stream, key, 0.5)  # a restart continues; 0.5 s kept
        await asyncio.sleep(0.6)
        again.append(_decision(False, "cloud", False), b"text")
        await again.flush()
        again.close()
        entries = await client.xrange(stream)
        assert [orjson.loads(fields[b"record"])["seq"] for _, fields in entries] == [4]  # 1-3 expired
        assert (
            await asyncio.to_thread(main, args) == 0 and "starts at record seq 4" in capsys.readouterr().out
        )
        await client.xadd(
            stream, {b"record": entries[0][1][b"record"].replace(b'"private":false', b'"private":true')}
        )
        assert await asyncio.to_thread(main, args) == 1
        assert "TAMPERED record seq 4 (line 2" in capsys.readouterr().out
    finally:
        await client.delete(stream)
        await client.aclose()

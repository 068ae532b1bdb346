"""The privacy ledger in Redis streams: a replica's own chain, acknowledged before a request
runs; a second replica on the same ledger id refused; a missing start of the stream reported as
a gap unless a retention explains it; Redis out of memory named as such."""

import asyncio

import orjson
import pytest
from redis.exceptions import ResponseError

from gateway.privacy.ledger_file import LedgerLockedError
from gateway.privacy.ledger_redis import default_ledger_id, open_redis_ledger, redis_write_error, stream_key
from hybridgw.main import main
from shared import redis_client

DECISION = {"request_id": "r", "tenant": "t", "private": False, "node": "edge-a", "on_prem": True}


@pytest.fixture
async def client(redis_url):
    client = redis_client.connect(redis_url)
    yield client
    await client.aclose()


def _verify(redis_url, prefix, *extra) -> list[str]:
    return ["audit", "verify", "--redis", redis_url, "--prefix", prefix, *extra]


async def test_a_stream_ledger_chains_verifies_and_reports_a_lost_start_as_a_gap(
    tmp_path, client, redis_url, redis_keys, capsys
):
    key_file = tmp_path / "ledger.key"
    ledger = await open_redis_ledger(client, redis_keys.prefix, "replica-1", key_file, None)
    for _ in range(4):
        await ledger.append(DECISION, b"text")
    await ledger.aclose()
    args = _verify(redis_url, redis_keys.prefix, "--public-key", f"{key_file}.pub")
    assert await asyncio.to_thread(main, args) == 0  # the only ledger id under the prefix
    assert "5 records, chain intact" in capsys.readouterr().out
    stream = stream_key(redis_keys.prefix, "replica-1")
    entries = await client.xrange(stream)
    await client.xdel(stream, *[entry_id for entry_id, _ in entries[:3]])  # as a restart without AOF
    assert await asyncio.to_thread(main, args) == 1
    out = capsys.readouterr().out
    assert "GAP records 1 to 3 are missing before record seq 4 (no retention is configured)" in out
    assert await asyncio.to_thread(main, [*args, "--retention-days", "1"]) == 1  # not old enough
    assert "(within the retention)" in capsys.readouterr().out
    again = await open_redis_ledger(client, redis_keys.prefix, "replica-1", key_file, 0.2)
    await asyncio.sleep(0.3)  # the rest expires under a 0.2 s retention at the next append
    await again.append(DECISION, b"text")
    await again.aclose()
    assert [orjson.loads(f[b"record"])["seq"] for _, f in await client.xrange(stream)] == [6]
    assert await asyncio.to_thread(main, [*args, "--retention-days", str(0.2 / 86400)]) == 0
    assert "starts at record seq 6 (older records expired under retention)" in capsys.readouterr().out


async def test_a_second_replica_on_one_ledger_id_is_refused(tmp_path, client, redis_keys):
    first = await open_redis_ledger(client, redis_keys.prefix, "gw", tmp_path / "ledger.key", None)
    try:
        with pytest.raises(LedgerLockedError, match="privacy-ledger:gw is in use by pid"):
            await open_redis_ledger(client, redis_keys.prefix, "gw", tmp_path / "ledger.key", None)
    finally:
        await first.aclose()
    again = await open_redis_ledger(client, redis_keys.prefix, "gw", tmp_path / "ledger.key", None)
    await again.aclose()


def test_the_default_ledger_id_is_the_host_and_an_id_kept_beside_the_key(tmp_path):
    import socket

    first = default_ledger_id(tmp_path)
    assert first.startswith(f"{socket.gethostname()}-") and len(first.rsplit("-", 1)[1]) == 8
    assert default_ledger_id(tmp_path) == first and default_ledger_id(tmp_path / "other") != first


def test_redis_out_of_memory_is_named_as_such():
    error = redis_write_error("s", ResponseError("OOM command not allowed when used memory > 'maxmemory'."))
    assert error.reason == "Redis is out of memory (maxmemory reached)"

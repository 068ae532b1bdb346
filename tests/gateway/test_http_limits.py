"""No slow client holds the front door: a request head trickled in (slowloris) is answered 408
and closed at its deadline, a chunked body that never ends likewise, an idle keep-alive
connection is closed, past the connection cap a new one is refused with a 503 that says so, and
`/health/live` stays fast throughout."""

import asyncio
import time

import orjson
import pytest

from gateway.config.gateway_config import GatewayConfig, HttpLimits, ModelEntry
from tests.fixtures.gateway_app import Gateway

pytestmark = pytest.mark.integration
LIVE = b"GET /health/live HTTP/1.1\r\nHost: gw\r\n\r\n"


def _config(model_path, **limits) -> GatewayConfig:
    return GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)], http=HttpLimits(**limits)
    )


async def _answer(reader: asyncio.StreamReader, timeout_s: float = 5.0) -> tuple[bytes, dict]:
    """(status line, JSON body) of the one answer before the server closed the connection."""
    data = await asyncio.wait_for(reader.read(), timeout_s)
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], orjson.loads(body)


async def _live_s(port: int) -> float:
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(LIVE)
    assert (await reader.readline()).startswith(b"HTTP/1.1 200")
    writer.close()
    return time.perf_counter() - started


async def _trickle(writer: asyncio.StreamWriter, chunks) -> None:
    for chunk in chunks:
        writer.write(chunk)
        await asyncio.sleep(0.05)


async def test_slowloris_heads_are_cut_at_their_deadline_while_liveness_stays_fast(model_path):
    async with Gateway(_config(model_path, header_timeout_s=0.5)) as gw:
        clients = [await asyncio.open_connection("127.0.0.1", gw.port) for _ in range(200)]
        head = LIVE[:-2] + b"X-Slow: " + b"a" * 1000
        trickles = [asyncio.create_task(_trickle(w, [bytes([c]) for c in head])) for _, w in clients]
        started = time.perf_counter()
        live = [await _live_s(gw.port) for _ in range(10)]
        ends = await asyncio.gather(*[_end(r) for r, _ in clients])
        took = time.perf_counter() - started
        for task in trickles:
            task.cancel()
        # each one answered 408, or reset: the client was still sending when its socket closed
        assert set(ends) <= {b"HTTP/1.1 408 Request Timeout", b"reset"} and took < 3.0, (set(ends), took)
        assert ends.count(b"HTTP/1.1 408 Request Timeout") > len(ends) // 2
        assert max(live) < 0.2, live


async def _end(reader: asyncio.StreamReader) -> bytes:
    try:
        data = await asyncio.wait_for(reader.read(), 5.0)
    except ConnectionResetError:
        return b"reset"
    return data.split(b"\r\n")[0] if data else b"reset"


async def test_a_chunked_body_that_never_ends_is_cut_at_its_deadline(model_path):
    async with Gateway(_config(model_path, body_timeout_s=0.5)) as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        trickle = asyncio.create_task(_trickle(writer, [b"1\r\n \r\n"] * 1000))
        live = [await _live_s(gw.port) for _ in range(5)]
        status = await asyncio.wait_for(reader.readline(), 3.0)
        trickle.cancel()
        assert status.startswith(b"HTTP/1.1 408") and max(live) < 0.2, live
        writer.close()


async def test_past_the_connection_cap_a_new_connection_is_refused_with_a_clear_503(model_path):
    async with Gateway(_config(model_path, max_connections=5, header_timeout_s=30)) as gw:
        held = [await asyncio.open_connection("127.0.0.1", gw.port) for _ in range(5)]
        reader, _ = await asyncio.open_connection("127.0.0.1", gw.port)
        status, body = await _answer(reader)
        assert status == b"HTTP/1.1 503 Service Unavailable" and body["error"] == {
            "message": "The gateway has too many open connections (limit 5); retry later.",
            "type": "server_error",
            "param": None,
            "code": "too_many_connections",
        }
        for _, held_writer in held:
            held_writer.close()
        deadline = time.monotonic() + 5
        while True:  # the held connections are counted out as the server sees them close
            try:
                await _live_s(gw.port)
                break
            except (AssertionError, ConnectionError):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)


async def test_an_idle_keep_alive_connection_is_closed(model_path):
    async with Gateway(_config(model_path, keepalive_timeout_s=0.3)) as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(LIVE)
        started = time.perf_counter()
        data = await asyncio.wait_for(reader.read(), 5.0)  # the answer, then the server closes
        assert data.startswith(b"HTTP/1.1 200") and time.perf_counter() - started < 2.0

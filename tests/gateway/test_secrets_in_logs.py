"""No key appears in a log line, an error body or a trace attribute, whatever the request looks like: a
real `hybridgw gateway` process with API keys gets malformed Authorization headers (a bare LF or
CR after the key, a folded line, a NUL, an overlong header), wrong and right keys; then every
byte it answered and every line it logged is searched for the secret."""

import asyncio
import hashlib

import aiohttp

from tests.fixtures.gateway_process import GatewayProcess

SECRET = "sk-live-7f3c9a1e5b2d4c6f8a0e"
MALFORMED = [
    b"Authorization: Bearer " + SECRET.encode() + b"\n",  # a bare LF ends the header line
    b"Authorization: Bearer " + SECRET.encode() + b"\rX-Next: y\r\n",  # a bare CR
    b"Authorization: Bearer\r\n " + SECRET.encode() + b"\r\n",  # a folded (obsolete) line
    b"Authorization: Bearer " + SECRET.encode() + b"\x00\r\n",  # a NUL in the value
    b"Authorization: Bearer " + SECRET.encode() + b"A" * 9000 + b"\r\n",  # past the size limit
    b"Authorization : Bearer " + SECRET.encode() + b"\r\n",  # a space before the colon
]


async def _raw(port: int, header: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = b'{"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}'
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    writer.write(head + header + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


async def test_no_key_in_any_log_line_error_body_or_answer(model_path, edge_node, tmp_path):
    keys = tmp_path / "keys.toml"
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    keys.write_text(f'[[keys]]\nid = "alice"\nsha256 = "{digest}"\ntenant = "t"\n')
    extra = ("--keys", str(keys), "--privacy-ledger", str(tmp_path / "ledger.jsonl"))
    traces = tmp_path / "traces.jsonl"  # every span the gateway records, with its attributes
    gateway = GatewayProcess(
        model_path, f"127.0.0.1:{edge_node.port}", extra, {"HYBRIDGW_TRACE_FILE": str(traces)}
    )
    try:
        port = int(gateway.url.rsplit(":", 1)[1].split("/")[0])
        answers = [await _raw(port, header) for header in MALFORMED]
        assert all(
            answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n")[0] for answer in answers
        )
        async with aiohttp.ClientSession() as session:
            url, body = (
                f"{gateway.url}/chat/completions",
                {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]},
            )
            for key in (SECRET + "x", SECRET[:-1], SECRET):
                async with session.post(
                    url, json={**body, "max_tokens": 1}, headers={"Authorization": f"Bearer {key}"}
                ) as r:
                    answers.append(await r.read())
                    assert r.status == (200 if key == SECRET else 401)
    finally:
        assert gateway.stop() == 0
    logged = "".join(gateway.lines)
    assert '"malformed_request"' in logged  # the malformed requests were logged, without their text
    assert b'"gen_ai.request.model"' in traces.read_bytes()  # spans were recorded
    assert SECRET[:12].encode() not in traces.read_bytes()
    leaked = [a for a in answers if SECRET[:12].encode() in a] + [
        line for line in gateway.lines if SECRET[:12] in line
    ]
    assert leaked == []

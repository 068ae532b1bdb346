"""A minimal keep-alive HTTP/1.1 client for streamed completions, as a load generator is (wrk, oha):
the request bytes are built once and the response is scanned, not parsed into objects, so a
benchmark through the gateway measures the gateway and not the client library."""

import asyncio
import time

FINAL_CHUNK = b"0\r\n\r\n"  # the end of a chunked body


class SSEClient:
    """One connection per concurrent stream, reused from a pool."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    @staticmethod
    def request_bytes(host: str, path: str, body: bytes) -> bytes:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    async def stream(self, request: bytes) -> tuple[float, float]:
        """Send one request; -> (seconds to the first SSE event, seconds to the end of the body).
        A pooled connection the server closed while idle (its keep-alive timeout) is replaced and
        the request sent again, as HTTP clients do; only the second try is timed."""
        if self._idle:
            reader, writer = self._idle.pop()
            try:
                return await self._exchange(reader, writer, request)
            except _ClosedBeforeAnswer:
                writer.close()
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            return await self._exchange(reader, writer, request)
        except _ClosedBeforeAnswer:
            raise ConnectionError("the gateway closed the connection") from None

    async def _exchange(self, reader, writer, request: bytes) -> tuple[float, float]:
        started = time.perf_counter()
        writer.write(request)
        first = None
        received = b""
        while not received.endswith(FINAL_CHUNK):
            data = await reader.read(1 << 16)
            if not data:
                if not received:
                    raise _ClosedBeforeAnswer
                raise ConnectionError("the gateway closed the connection mid-response")
            received += data
            if first is None and b"data: {" in received:
                first = time.perf_counter() - started
        if not received.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"the gateway answered {received[:200]!r}")
        self._idle.append((reader, writer))
        return first, time.perf_counter() - started

    async def close(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


class _ClosedBeforeAnswer(Exception):
    """The connection ended before any byte of the response."""

"""The load-generating clients of benchmarks/gateway_overhead.py, each path's in its own process.

A client process serves one path (`session`: the node's Session RPC, as the gateway itself calls
it; `generate`: one Generate call per request; `gateway`: HTTP + SSE with a minimal client;
`aiohttp`: the same with aiohttp's client). It reads "CONCURRENCY COUNT" lines on stdin and
answers each with one JSON line once that many requests are done.
Run (by ClientProcess): python benchmarks/overhead_clients.py KIND TARGET TOKENS STEP_MS CORE
"""

import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import grpc
from queue_sink import QueueSink  # beside this script
from sse_client import SSEClient  # beside this script

from gateway.backends.edge_session import SessionStream
from hybridgw.serving import new_event_loop
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[1]


async def drive(
    concurrency: int, total: int, one_request, ramp_s: float
) -> tuple[list[float], list[float], int, float]:
    """`concurrency` clients, each sending its next request when the last one ends; the k-th
    client starts k/concurrency of `ramp_s` in. -> (ttfts, totals, requests completed while every
    client was sending, that window's seconds): the rate without the ramp-up and the tail, where
    fewer clients send (the whole run's if that window is empty)."""
    ttfts, totals, completed_at = [], [], []
    queue = list(range(total))
    window = [0.0, 0.0]  # every client started .. the last request taken

    async def client(number: int) -> None:
        await asyncio.sleep(ramp_s * number / concurrency)
        if number == concurrency - 1:
            window[0] = time.perf_counter()
        while queue:
            queue.pop()
            if not queue:
                window[1] = time.perf_counter()
            ttft, whole = await one_request()
            ttfts.append(ttft)
            totals.append(whole)
            completed_at.append(time.perf_counter())

    started = time.perf_counter()
    await asyncio.gather(*(client(number) for number in range(concurrency)))
    ended = time.perf_counter()
    steady = sum(1 for t in completed_at if window[0] <= t <= window[1])
    if steady == 0 or window[1] <= window[0]:
        return ttfts, totals, len(ttfts), ended - started
    return ttfts, totals, steady, window[1] - window[0]


async def serve_client(kind: str, target: str, tokens: int, step_ms: float) -> None:
    """A client process for one path: reads "CONCURRENCY COUNT" lines, answers each with a JSON
    line [ttfts, totals, steady requests, steady seconds]. Clients ramp up over one request's
    duration."""
    one_request, close = await make_client(kind, target, tokens)
    loop = asyncio.get_running_loop()
    ramp_s = tokens * step_ms / 1000
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        concurrency, count = map(int, line.split())
        print(json.dumps(await drive(concurrency, count, one_request, ramp_s)), flush=True)
    await close()


async def make_client(kind: str, target: str, tokens: int):
    """-> (one_request, close). `session`: the node's Session RPC, as the gateway itself calls it
    (target host:port); `generate`: one Generate call per request, as a simple gRPC client would;
    `gateway`: HTTP + SSE through the gateway (URL), with a minimal client; `aiohttp`: the same
    with aiohttp's client."""
    if kind in ("session", "generate"):
        channel = grpc.aio.insecure_channel(target)
        stub = pb_grpc.InferenceStub(channel)
        sampling = pb.SamplingParams(max_tokens=tokens)
        session = SessionStream(stub, "bench") if kind == "session" else None
        counter = itertools.count()

        async def one_request():
            request = pb.GenerateRequest(
                request_id=str(next(counter)), prompt_token_ids=[1, 2, 3], sampling=sampling
            )
            started = time.perf_counter()
            first = None
            if session is None:
                async for _ in stub.Generate(request):
                    first = first or time.perf_counter() - started
                return first, time.perf_counter() - started
            sink = QueueSink()
            await session.send(request, sink)
            while True:
                chunks = await sink.take_all()
                first = first or time.perf_counter() - started
                if chunks[-1].finish_reason:
                    return first, time.perf_counter() - started

        async def close_grpc():
            if session is not None:
                session.close()
            await channel.close()

        return one_request, close_grpc
    bodies = map(_body, itertools.count(), itertools.repeat(tokens))
    if kind == "gateway":
        url = urlsplit(target)
        client = SSEClient(url.hostname, url.port)

        async def one_request():
            body = json.dumps(next(bodies)).encode()
            return await client.stream(SSEClient.request_bytes(url.hostname, "/v1/chat/completions", body))

        return one_request, client.close
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def one_request():
        started = time.perf_counter()
        first = None
        async with session.post(f"{target}/v1/chat/completions", json=next(bodies)) as response:
            if response.status != 200:
                raise RuntimeError(f"gateway answered {response.status}: {await response.text()}")
            async for line in response.content:
                if line.startswith(b"data: {") and first is None:
                    first = time.perf_counter() - started
        return first, time.perf_counter() - started

    return one_request, session.close


def _body(number: int, tokens: int) -> dict:
    """Every request's message differs (as users' do), so no cache at the gateway sees a repeat;
    the template's system prompt and role headers repeat, as they do in real traffic."""
    return {
        "model": "bench",
        "messages": [{"role": "user", "content": f"Hi, this is request {number}."}],
        "max_tokens": tokens,
        "stream": True,
    }


class ClientProcess:
    """One path's clients in their own process (so no path's client carries another's machinery,
    gRPC's poller thread, say), pinned to `core`: the one apart from the server it calls."""

    def __init__(self, kind: str, target: str, tokens: int, step_ms: float, core: int):
        command = [sys.executable, __file__, kind, target, str(tokens), str(step_ms), str(core)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )

    def run(self, concurrency: int, count: int) -> tuple[list[float], list[float], int, float]:
        self.process.stdin.write(f"{concurrency} {count}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"a client process ended (exit status {self.process.wait()})")
        return tuple(json.loads(line))

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


if __name__ == "__main__":
    kind, target, tokens, step_ms, core = sys.argv[1:6]
    if os.cpu_count() > 1:
        os.sched_setaffinity(0, {int(core)})
    # the clients on uvloop as well: the least client CPU beside the server it shares a core with
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        runner.run(serve_client(kind, target, int(tokens), float(step_ms)))

"""The load generator: sends a workload's requests as streamed chat completions and records, per
request, what `vllm bench serve` measures (TTFT, the gap between tokens, end to end) and where
hybridgw ran it (X-Hybridgw-Target)."""

import asyncio
import json
import random
import time
from dataclasses import dataclass, field

import aiohttp
from tqdm import tqdm

from hybridgw.bench.workloads import BenchRequest


@dataclass(slots=True)
class RequestResult:
    kind: str
    is_private: bool
    started_s: float  # after the run's start
    status: int = 0  # HTTP status; 0: no answer (connection error)
    error: str = ""
    target: str = ""  # X-Hybridgw-Target: edge | cloud ("" from other servers)
    ttft_s: float | None = None
    e2e_s: float | None = None
    itl_s: list[float] = field(default_factory=list)  # gaps between content chunks
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # usage.prompt_tokens_details.cached_tokens, where the server says

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.error

    @property
    def tpot_s(self) -> float | None:
        if self.ttft_s is None or self.e2e_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


@dataclass(frozen=True, slots=True)
class RunSettings:
    base_url: str  # the server's /v1
    model: str
    rate: float | None = None  # requests per second (Poisson arrivals); None: the workload's times
    concurrency: int | None = None  # at most this many in flight
    duration_s: float | None = None  # repeat the workload until then
    seed: int = 0
    ignore_eos: bool = True
    api_key: str | None = None
    timeout_s: float = 600.0


def arrival_times(requests: list[BenchRequest], settings: RunSettings) -> list[float]:
    """When each request is sent, seconds after the start."""
    if settings.rate is None:
        return [0.0 if settings.concurrency else r.arrival_s for r in requests]
    rng = random.Random(settings.seed)
    now, times = 0.0, []
    for _ in requests:
        times.append(now)
        now += rng.expovariate(settings.rate)
    return times


async def run_workload(
    requests: list[BenchRequest], settings: RunSettings
) -> tuple[list[RequestResult], float]:
    """-> (one result per request sent, the run's wall time in seconds)."""
    limit = asyncio.Semaphore(settings.concurrency) if settings.concurrency else None
    timeout = aiohttp.ClientTimeout(total=settings.timeout_s)
    connector = aiohttp.TCPConnector(limit=0)
    results: list[RequestResult] = []
    progress = tqdm(total=None if settings.duration_s else len(requests), unit="req", desc="bench")
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        started = time.perf_counter()

        async def one(request: BenchRequest, at: float) -> None:
            delay = at - (time.perf_counter() - started)
            if delay > 0:
                await asyncio.sleep(delay)
            if settings.duration_s and time.perf_counter() - started > settings.duration_s:
                return
            if limit is not None:
                async with limit:
                    results.append(await _send(session, request, settings, started))
            else:
                results.append(await _send(session, request, settings, started))
            progress.update(1)

        rounds = 1
        while True:
            times = arrival_times(requests, settings)
            offset = time.perf_counter() - started
            await asyncio.gather(*(one(r, offset + t) for r, t in zip(requests, times, strict=True)))
            if not settings.duration_s or time.perf_counter() - started >= settings.duration_s:
                break
            rounds += 1
        wall = time.perf_counter() - started
    progress.close()
    return results, wall


def _body(request: BenchRequest, settings: RunSettings) -> dict:
    body = {
        "model": settings.model,
        "messages": request.messages,
        "max_tokens": request.max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if settings.ignore_eos:
        body["ignore_eos"] = True
    return body


async def _send(
    session: aiohttp.ClientSession, request: BenchRequest, settings: RunSettings, run_started: float
) -> RequestResult:
    headers = {"Content-Type": "application/json", **request.headers}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    sent = time.perf_counter()
    result = RequestResult(request.kind, request.is_private, sent - run_started)
    url = settings.base_url.rstrip("/") + "/chat/completions"
    try:
        async with session.post(url, json=_body(request, settings), headers=headers) as response:
            result.status = response.status
            result.target = response.headers.get("X-Hybridgw-Target", "")
            if response.status != 200:
                result.error = (await response.text())[:200]
                return result
            await _read_stream(response, result, sent)
    except (TimeoutError, aiohttp.ClientError) as error:
        result.error = f"{type(error).__name__}: {error}"[:200]
    return result


async def _read_stream(response: aiohttp.ClientResponse, result: RequestResult, sent: float) -> None:
    last = None
    num_content_chunks = 0
    async for line in response.content:
        if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
            continue
        event = json.loads(line[6:])
        if "error" in event:
            result.error = str(event["error"].get("message", event["error"]))[:200]
            return
        usage = event.get("usage")
        if usage:
            result.prompt_tokens = usage.get("prompt_tokens", 0)
            result.output_tokens = usage.get("completion_tokens", 0)
            result.cached_tokens = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        choices = event.get("choices") or []
        if choices and (choices[0].get("delta") or {}).get("content"):
            now = time.perf_counter()
            if last is None:
                result.ttft_s = now - sent
            else:
                result.itl_s.append(now - last)
            last = now
            num_content_chunks += 1
    result.e2e_s = time.perf_counter() - sent
    if not result.output_tokens:  # a server that reports no usage: one token per chunk
        result.output_tokens = num_content_chunks

"""The privacy corpus end to end (issue 61): every case sent as a chat request to a real `hybridgw
gateway` process (`auto` privacy mode) whose only edge node is down and whose only other node is
an off-prem ("cloud") OpenAI-compatible upstream that is up, a stub in this process answering
one token. Where each request ran is read from the answer: 200 with `X-Hybridgw-Target: cloud`
let it out; 503 `no_private_node` kept it on-prem. Recall (private cases kept) and over-block rate
(public cases kept) for each part: cases we wrote, third-party, outside
(tests/gateway/privacy_outside/*.jsonl, or --outside DIR), per kind and language. Writes
benchmarks/results/privacy_corpus.json.

    .venv/bin/python benchmarks/privacy_corpus.py [--outside DIR] [--parts ours,third-party,outside]

The Presidio anchor (presidio-analyzer on the same cases) needs a spaCy English model; none is
published on PyPI by spaCy's makers (they ship them from their own release pages), so where
`en_core_web_lg`/`en_core_web_sm` is not installed the anchor is skipped and says so.
"""

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web

from formats.ggml_types import GGMLType
from tests.fixtures.edge_node import free_port
from tests.fixtures.gateway_process import GatewayProcess
from tests.fixtures.tiny_models import config_for, write_tiny_model
from tests.gateway.privacy_scoring import PARTS, Score, rows
from tests.gateway.privacy_thirdparty import Case, outside_cases

CONCURRENCY = 16
ONE_TOKEN = b'data: {"choices":[{"index":0,"text":"ok","finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


async def stub_upstream() -> tuple[web.AppRunner, str]:
    """An OpenAI-compatible server that answers every completion with one token."""

    async def complete(request: web.Request) -> web.StreamResponse:
        await request.read()
        reply = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await reply.prepare(request)
        await reply.write(ONE_TOKEN)
        return reply

    app = web.Application()
    app.router.add_get("/health", lambda _: web.Response(text="ok"))
    app.router.add_post("/v1/completions", complete)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}/v1"


async def where(session: aiohttp.ClientSession, url: str, text: str) -> str:
    """ "cloud", "edge", "on-prem only" (503 no_private_node) or "error <status>"."""
    body = {"model": "tiny", "messages": [{"role": "user", "content": text}], "max_tokens": 1}
    async with session.post(f"{url}/chat/completions", json=body) as reply:
        payload = await reply.read()
        if reply.status == 200:
            return reply.headers.get("X-Hybridgw-Target", "unknown")
        if reply.status == 503 and b"no_private_node" in payload:
            return "on-prem only"
        return f"error {reply.status}"


async def send_all(url: str, cases: list[Case]) -> list[str]:
    limit = asyncio.Semaphore(CONCURRENCY)
    async with aiohttp.ClientSession() as session:
        await wait_for_cloud(session, url)

        async def one(case: Case) -> str:
            async with limit:
                return await where(session, url, case.text)

        return await asyncio.gather(*(one(case) for case in cases))


async def wait_for_cloud(session: aiohttp.ClientSession, url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while (outcome := await where(session, url, "What is the capital of France?")) != "cloud":
        assert time.monotonic() < deadline, f"the cloud upstream never took a public request: {outcome}"
        await asyncio.sleep(0.2)


async def measure(cases_by_part: dict[str, list[Case]], model_path: Path) -> dict[str, list[str]]:
    runner, upstream_url = await stub_upstream()
    extra = ("--upstream", f"cloud-a={upstream_url}", "--privacy-ledger", "")
    gateway = await asyncio.to_thread(GatewayProcess, model_path, f"127.0.0.1:{free_port()}", extra)
    try:
        return {part: await send_all(gateway.url, cases) for part, cases in cases_by_part.items()}
    finally:
        await asyncio.to_thread(gateway.stop)
        await runner.cleanup()


def tally(cases: list[Case], outcomes: list[str]) -> tuple[Score, dict[str, int]]:
    result, counts = Score(), {}
    for case, outcome in zip(cases, outcomes, strict=True):
        counts[outcome] = counts.get(outcome, 0) + 1
        result.add(case, outcome != "cloud")  # anything but the cloud kept it on-prem
    return result, counts


def presidio_anchor() -> str | None:
    """Why the anchor cannot run here, or None when it can."""
    try:
        import spacy
    except ImportError:
        return "spaCy is not installed"
    if not any(spacy.util.is_package(name) for name in ("en_core_web_lg", "en_core_web_sm")):
        return "no spaCy English model installed (none is on PyPI from its makers): anchor skipped"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outside", type=Path, help="a folder of outside *.jsonl files")
    parser.add_argument("--parts", default="ours,third-party,outside")
    args = parser.parse_args()
    loaders = {**PARTS, "outside": lambda: outside_cases(args.outside) if args.outside else outside_cases()}
    cases_by_part = {part: list(loaders[part]()) for part in args.parts.split(",")}
    with tempfile.TemporaryDirectory() as folder:
        model_path = write_tiny_model(
            Path(folder) / "tiny.gguf", config=config_for(GGMLType.F32, context_length=8192)
        )
        started = time.perf_counter()
        outcomes = asyncio.run(measure(cases_by_part, model_path))
    results = {"seconds": round(time.perf_counter() - started, 1), "parts": {}}
    for part, cases in cases_by_part.items():
        result, counts = tally(cases, outcomes[part])
        print(f"== {part}: {len(cases)} cases, outcomes {counts}")
        print("\n".join(rows(result)))
        results["parts"][part] = {
            "outcomes": counts,
            "rows": rows(result),
            **totals(result),
            "misses": [listed(case) for case in result.misses],
            "false_alarms": [listed(case) for case in result.false_alarms],
        }
    results["presidio_anchor"] = presidio_anchor() or "available: not yet wired"
    print(f"presidio anchor: {results['presidio_anchor']}")
    out = Path(__file__).parent / "results" / "privacy_corpus.json"
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(f"wrote {out} ({results['seconds']} s)")


def listed(case: Case) -> list[str]:
    """A case for the results file; an outside case by its id only (its text stays unseen by
    whoever tunes the detector: a holdout read is a holdout spent)."""
    text = "" if case.source.startswith("outside") else case.text[:300]
    return [case.kind, case.language, case.source, text]


def totals(result: Score) -> dict:
    t = result.total
    return {
        "recall": t.recall,
        "over_blocked": t.over_blocked,
        "num_private": t.num_private,
        "num_public": t.num_public,
    }


if __name__ == "__main__":
    main()

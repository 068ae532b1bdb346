"""How many cloud requests and reply tokens one Redis carries: the cloud queue's protocol with the
project's own messages and scripts, no engine behind it (docs/deploy.md's capacity model).

Each request does what gateway/backends/cloud.py and cloud/worker.py do: the gateway XADDs a
GenerateRequest (a prompt of --prompt-tokens ids, trace context, cache salt) to the request
stream; a worker XREADGROUPs it, takes the fence (cloud/fenced_reply.py's TAKE script), writes one
signed GenerateChunk per token (its WRITE script: --tokens of them, the last with the usage),
deletes the fence and XACKs + XDELs the entry; the gateway XREADs the reply stream (blocking, as
gateway/backends/reply_reader.py) until the last chunk, then DELetes it. --concurrency requests
run at once per process (as many worker loops), in --processes processes.

    python benchmarks/redis_stream.py [--redis-url redis://127.0.0.1:6379/0] [--private]
        [--tokens 1 300] [--prompt-tokens 300] [--concurrency 16] [--processes 2] [--seconds 10]

--private starts its own redis-server on a free port (nothing else on it: its CPU time is the
protocol's alone). Keys live under a fresh prefix and are deleted at the end. Prints, per
--tokens: requests/s, reply chunks/s, Redis commands and scripts per request, the server's CPU
time per request (INFO cpu) and the time one TAKE or WRITE script takes inside Redis (INFO
commandstats); on a shared Redis both count other clients' work too.
"""

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import redis
import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cloud.fenced_reply import FencedReply

from shared.chunk_signing import ChunkSigner, worker_key
from shared.proto import inference_pb2 as pb
from shared.redis_keys import RedisKeys
from shared.reply_stream import fence

READ_BLOCK_MS = 1000
# per request: XADD, XREADGROUP, TAKE, `tokens` WRITEs, DEL fence, XACK + XDEL, XREADs, DEL reply
FIXED_COMMANDS = 7


def request_entry(prompt_tokens: int, max_tokens: int) -> tuple[str, dict[str, bytes | str]]:
    """A request's id and its stream entry's fields, as the gateway writes them."""
    request = pb.GenerateRequest(
        request_id=uuid.uuid4().hex,
        model="smollm2-135m",
        prompt_token_ids=[(i * 7919) % 49152 for i in range(prompt_tokens)],
        sampling=pb.SamplingParams(temperature=0.7, top_p=0.95, max_tokens=max_tokens),
        cache_salt=uuid.uuid4().hex[:16],
    )
    traceparent = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
    return request.request_id, {"request": request.SerializeToString(), "traceparent": traceparent}


def token_chunk(signer: ChunkSigner, request_id: str, owner: str, index: int, last: bool) -> bytes:
    chunk = pb.GenerateChunk(
        request_id=request_id,
        index=index,
        owner=owner,
        tokens=[pb.GeneratedToken(token_id=(index * 31) % 49152, logprob=-0.25)],
    )
    if last:
        chunk.finish_reason = pb.FINISH_REASON_LENGTH
        chunk.usage.prompt_tokens, chunk.usage.completion_tokens = 300, index + 1
    return signer.sign(chunk).SerializeToString()


class Side:
    """One process's clients: its gateways' and its workers' connections, and what they did."""

    def __init__(self, url: str, keys: RedisKeys, args: argparse.Namespace, tokens: int):
        self.redis = aioredis.from_url(url, max_connections=4 * args.concurrency + 8)
        self.keys, self.args, self.tokens = keys, args, tokens
        self.fenced = FencedReply(self.redis, keys, reply_ttl_s=600)
        self.done, self.reads, self.chunks = 0, 0, 0

    async def gateway(self, stop: float) -> None:
        while time.monotonic() < stop:
            request_id, fields = request_entry(self.args.prompt_tokens, self.tokens)
            await self.redis.xadd(self.keys.request_stream, fields)
            reply, last_id, finished = self.keys.reply_stream(request_id), "0-0", False
            while not finished:
                entries = await self.redis.xread({reply: last_id}, block=READ_BLOCK_MS)
                self.reads += 1
                for _, items in entries:
                    for entry_id, fields in items:
                        last_id = entry_id
                        chunk = pb.GenerateChunk.FromString(fields[b"chunk"])
                        finished = finished or chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED
            await self.redis.delete(reply, self.keys.fence(request_id))
            self.done += 1

    async def worker(self, name: str, stop: float) -> None:
        signer = ChunkSigner(worker_key(b"bench-secret", name))
        stream, group = self.keys.request_stream, self.keys.consumer_group
        while time.monotonic() < stop + 2:
            found = await self.redis.xreadgroup(group, name, {stream: ">"}, count=1, block=200)
            for _, items in found or []:
                for entry_id, fields in items:
                    request = pb.GenerateRequest.FromString(fields[b"request"])
                    await self.serve(signer, name, entry_id, request.request_id)

    async def serve(self, signer: ChunkSigner, name: str, entry_id: bytes, request_id: str) -> None:
        owner = f"{name}/{uuid.uuid4().hex[:12]}"
        stream = self.keys.request_stream
        signed_fence = signer.sign(fence(request_id, owner)).SerializeToString()
        await self.fenced.take(stream, entry_id, name, request_id, owner, signed_fence)
        for index in range(self.tokens):
            chunk = token_chunk(signer, request_id, owner, index, index == self.tokens - 1)
            await self.fenced.write(request_id, owner, chunk)
            self.chunks += 1
        await self.redis.delete(self.keys.fence(request_id))
        async with self.redis.pipeline(transaction=False) as pipe:
            await pipe.xack(stream, self.keys.consumer_group, entry_id).xdel(stream, entry_id).execute()


async def _process(url: str, prefix: str, args: argparse.Namespace, tokens: int, rank: int) -> dict:
    side = Side(url, RedisKeys(prefix=prefix), args, tokens)
    stop = time.monotonic() + args.seconds
    cpu = time.process_time()
    workers = [side.worker(f"bench-{rank}-{i}", stop) for i in range(args.concurrency)]
    gateways = [side.gateway(stop) for _ in range(args.concurrency)]
    await asyncio.gather(*workers, *gateways)
    await side.redis.aclose()
    cpu_s = time.process_time() - cpu
    return {"requests": side.done, "reads": side.reads, "chunks": side.chunks, "client_cpu_s": cpu_s}


def _run_process(url: str, prefix: str, args: argparse.Namespace, tokens: int, rank: int) -> dict:
    return asyncio.run(_process(url, prefix, args, tokens, rank))


def _server_cpu_s(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def _scripts(client: redis.Redis) -> tuple[int, float]:
    """EVALSHA's calls and the microseconds Redis spent in them (INFO commandstats: the scripts'
    own commands included, no I/O, no event loop)."""
    stats = client.info("commandstats").get("cmdstat_evalsha", {"calls": 0, "usec": 0})
    return int(stats["calls"]), float(stats["usec"])


def measure(url: str, args: argparse.Namespace, tokens: int) -> dict:
    keys = RedisKeys(prefix=f"hybridgw-bench-{uuid.uuid4().hex[:8]}:")
    client = redis.Redis.from_url(url)
    client.xgroup_create(keys.request_stream, keys.consumer_group, id="0", mkstream=True)
    cpu, scripts, started = _server_cpu_s(client), _scripts(client), time.monotonic()
    try:
        with ProcessPoolExecutor(args.processes) as pool:
            runs = [
                pool.submit(_run_process, url, keys.prefix, args, tokens, r) for r in range(args.processes)
            ]
            results = [run.result() for run in runs]
        wall_s, server_cpu_s = time.monotonic() - started, _server_cpu_s(client) - cpu
        calls, usec = (after - before for after, before in zip(_scripts(client), scripts, strict=True))
    finally:
        for key in client.scan_iter(match=f"{keys.prefix}*"):
            client.delete(key)
        client.close()
    requests = sum(r["requests"] for r in results)
    reads = sum(r["reads"] for r in results)
    chunks = sum(r["chunks"] for r in results)  # written, of finished requests or not
    return {
        "tokens": tokens,
        "requests_per_s": requests / args.seconds,
        "chunks_per_s": chunks / wall_s,
        "commands_per_request": FIXED_COMMANDS - 1 + tokens + reads / max(requests, 1),
        "server_cpu_us_per_request": 1e6 * server_cpu_s / max(requests, 1),
        # the work of requests still running at the end counts in the CPU time: per chunk is exact
        "server_cpu_us_per_chunk": 1e6 * server_cpu_s / max(chunks, 1),
        "script_us_per_call": usec / max(calls, 1),
        "client_cpu_share": sum(r["client_cpu_s"] for r in results) / (wall_s * args.processes),
    }


def _private_redis() -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    binary = shutil.which("redis-server") or sys.exit("--private needs redis-server on PATH")
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(200):
        try:
            redis.Redis.from_url(url).ping()
            return server, url
        except redis.ConnectionError:
            time.sleep(0.05)
    server.kill()
    sys.exit("redis-server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--redis-url", default=os.environ.get("HYBRIDGW_REDIS_URL", "redis://127.0.0.1:6379/0")
    )
    parser.add_argument("--private", action="store_true", help="start a redis-server of its own")
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 300], help="reply tokens per request")
    parser.add_argument("--prompt-tokens", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight per process")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    server, url = _private_redis() if args.private else (None, args.redis_url)
    try:
        version = redis.Redis.from_url(url).info("server")["redis_version"]
        signer = ChunkSigner(worker_key(b"bench-secret", "w"))
        print(f"Redis {version} at {url.split('@')[-1]}, {os.cpu_count()} CPUs; {args.processes} processes")
        entry = request_entry(args.prompt_tokens, 300)[1]
        print(f"  request entry {sum(len(v) for v in entry.values())} B ({args.prompt_tokens}-token prompt)")
        chunk = token_chunk(signer, uuid.uuid4().hex, f"w/{uuid.uuid4().hex[:12]}", 7, False)
        print(f"  one-token signed chunk {len(chunk)} B")
        for tokens in args.tokens:
            row = measure(url, args, tokens)
            print(
                f"  {tokens:4d} tokens/request: {row['requests_per_s']:8.1f} requests/s, "
                f"{row['chunks_per_s']:8.0f} chunks/s, {row['commands_per_request']:.1f} commands/request, "
                f"server {row['server_cpu_us_per_request']:.0f} us CPU/request, "
                f"{row['server_cpu_us_per_chunk']:.0f} us/chunk "
                f"(a TAKE or WRITE script {row['script_us_per_call']:.1f} us), "
                f"clients at {100 * row['client_cpu_share']:.0f}% CPU"
            )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()

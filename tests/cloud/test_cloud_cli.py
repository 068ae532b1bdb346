"""`hybridgw cloud` as an operator runs it: one process serving the Redis queue and gRPC."""

import asyncio
import signal
import subprocess
import sys
import threading
import time

import aiohttp
import grpc
import redis.asyncio as aioredis
from prometheus_client.parser import text_string_to_metric_families

from formats.ggml_types import GGMLType
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from tests.cloud.test_worker import _read_reply, _request
from tests.fixtures.process_logs import logged_port


async def test_cloud_worker_process_serves_queue_and_grpc_then_drains(tiny_model, redis_url, redis_keys):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hybridgw",
            "cloud",
            "--model",
            str(tiny_model(GGMLType.F32)),
            "--redis",
            redis_url,
            "--prefix",
            redis_keys.prefix,
            "--name",
            "cli-worker",
            "--grpc-port",
            "0",
            "--num-blocks",
            "64",
            "--block-size",
            "4",
            "--metrics-port",
            "0",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True).start()
    deadline = time.monotonic() + 120
    while not any('"listening"' in line for line in lines):
        assert process.poll() is None and time.monotonic() < deadline, "".join(lines)
        await asyncio.sleep(0.05)
    port, metrics_port = logged_port(lines), logged_port(lines, "metrics_listening")  # bound at 0
    client = aioredis.from_url(redis_url)
    await client.xadd(redis_keys.request_stream, {"request": _request("via-redis", max_tokens=6)})
    from_queue = [t.token_id for c in await _read_reply(client, redis_keys, "via-redis") for t in c.tokens]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        request = pb.GenerateRequest(
            request_id="via-grpc",
            prompt_token_ids=[5, 17, 200, 33, 91],
            sampling=pb.SamplingParams(max_tokens=6, ignore_eos=True),
        )
        from_grpc = [t.token_id for c in pb_grpc.InferenceStub(channel).Generate(request) for t in c.tokens]
        stats = pb_grpc.InferenceStub(channel).Stats(pb.StatsRequest())
    assert from_grpc == from_queue and len(from_queue) == 6
    assert (stats.kind, stats.node_id) == ("cloud", "cli-worker")
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{metrics_port}/metrics") as response,
    ):
        exposition = await response.text()
    [requests_total] = [
        s
        for f in text_string_to_metric_families(exposition)
        for s in f.samples
        if s.name == "hybridgw_node_requests_total"
    ]
    assert requests_total.labels == {"node": "cli-worker", "kind": "cloud"} and requests_total.value == 2
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    assert not await client.exists(redis_keys.worker_heartbeat("cli-worker"))
    await client.aclose()

"""`hybridgw up`: the whole platform in one process tree on the embedded default.

The demo model is pulled if absent; an edge node runs as a child process; the cloud engine runs
in this process (or, with --redis, as a worker process behind Redis); the gateway serves the
OpenAI API here. Ctrl-C (or SIGTERM) stops everything.
"""

import argparse
import signal
import socket
import subprocess
import sys
import time

MODEL_NAME = "smollm2-135m"


def register(commands: argparse._SubParsersAction) -> None:
    up = commands.add_parser(
        "up", help="run gateway + edge node + cloud worker on the demo model, in one command"
    )
    up.add_argument("--port", type=int, default=8080)
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument("--redis", help="use this Redis for the cloud pool (default: in-process, no Redis)")
    up.add_argument("--edge-slots", type=int, default=2)
    up.add_argument("--no-cloud", action="store_true", help="edge only")
    up.set_defaults(handler=_up)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(args: list[str], ready_text: str, name: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "shared", *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    for line in process.stderr:
        if ready_text in line:
            break
        if time.monotonic() > deadline:
            break
    if process.poll() is not None:
        raise SystemExit(f"hybridgw: error: the {name} did not start")
    # keep draining its log so the child never blocks on a full pipe
    import threading

    threading.Thread(target=lambda: [sys.stderr.write(line) for line in process.stderr], daemon=True).start()
    return process


def _up(args: argparse.Namespace) -> int:
    import logging

    from aiohttp import web

    from formats.model_pull import DEFAULT_MODEL, pull
    from gateway.app import create_app
    from gateway.config import EdgeNodeEntry, GatewayConfig, ModelEntry
    from shared.telemetry import setup_tracing

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    setup_tracing("hybridgw-up")
    model_path = str(pull(DEFAULT_MODEL))
    children: list[subprocess.Popen] = []
    extra_backends = []
    try:
        edge_port = _free_port()
        print(f"starting the edge node on 127.0.0.1:{edge_port} ...", file=sys.stderr)
        children.append(
            _start(
                [
                    "edge",
                    "--model",
                    model_path,
                    "--port",
                    str(edge_port),
                    "--slots",
                    str(args.edge_slots),
                    "--node-id",
                    "edge-local",
                ],
                '"listening"',
                "edge node",
            )
        )
        if not args.no_cloud and args.redis:
            print("starting a cloud worker on Redis ...", file=sys.stderr)
            children.append(
                _start(
                    [
                        "cloud",
                        "--model",
                        model_path,
                        "--redis",
                        args.redis,
                        "--kv-cache-gib",
                        "0.25",
                        "--grpc-port",
                        "0",
                        "--name",
                        "cloud-local",
                    ],
                    '"listening"',
                    "cloud worker",
                )
            )
        elif not args.no_cloud:
            extra_backends.append(_local_cloud(model_path))
        config = GatewayConfig(
            models=[ModelEntry(MODEL_NAME, model_path)],
            edge_nodes=[EdgeNodeEntry("edge-local", f"127.0.0.1:{edge_port}", [MODEL_NAME])],
            redis_url=args.redis if not args.no_cloud else None,
        )
        _banner(args.host, args.port)
        web.run_app(
            create_app(config, extra_backends),
            host=args.host,
            port=args.port,
            handler_cancellation=True,
            print=None,
            access_log=None,
        )
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
        for backend in extra_backends:
            backend.engine.close()
        print("hybridgw: stopped", file=sys.stderr)
    return 0


def _local_cloud(model_path: str):
    from cloud.engine_core import CloudEngineCore
    from cloud.llm_engine import LLMEngine
    from gateway.backends.local_cloud import LocalCloudBackend
    from shared.async_engine import AsyncEngine

    print("loading the cloud engine in process (no Redis) ...", file=sys.stderr)
    engine = LLMEngine(model_path, kv_cache_gib=0.25, max_num_seqs=16)
    return LocalCloudBackend(AsyncEngine(CloudEngineCore(engine)), frozenset({MODEL_NAME}))


def _banner(host: str, port: int) -> None:
    url = f"http://{host}:{port}"
    print(
        f"""
hybridgw is up: {url}/v1   model: {MODEL_NAME}

  curl {url}/v1/chat/completions -H 'Content-Type: application/json' \\
    -d '{{"model": "{MODEL_NAME}", "messages": [{{"role": "user", "content": "Hello!"}}]}}'

  python -c "from openai import OpenAI; c = OpenAI(base_url='{url}/v1', api_key='none'); \\
print(c.chat.completions.create(model='{MODEL_NAME}', \\
messages=[{{'role': 'user', 'content': 'Hello!'}}]).choices[0].message.content)"

Ctrl-C stops everything.
""",
        flush=True,
    )

"""`hybridgw up`: the whole platform in one process tree on the embedded default.

The demo model is pulled if absent; an edge node runs as a child process; the cloud engine runs
in this process (or, with --redis, as a worker process behind Redis); the gateway serves the
OpenAI API here. Ctrl-C (or SIGTERM) stops everything.
"""

import argparse
import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from hybridgw.compile_progress import human_line, report_compile_progress
from hybridgw.logs import setup_logging
from hybridgw.parent_watch import ENV
from hybridgw.shared_cores import SharedCores

EDGE_ID = "edge-local"
MODEL_NAME = "smollm2-135m"
EDGE_ALONE_QUEUE_BOUND = 64  # waiting requests an edge with no cloud beside it takes (else 16)
EDGE_SLOT_CONTEXT = 1024  # tokens per edge slot; longer prompts go to the cloud engine
# Requests the cloud engine runs at once. At 32, a minute of mixed or shared-prefix traffic left
# the later chats waiting for a whole generation of running ones to end (TTFT p99 33 -> 31 s on
# 64 shared-prefix chats at 64, the cloud engine alone on one thread).
CLOUD_MAX_NUM_SEQS = 64
# how long the in-process cloud engine takes to load once the edge is up (8 s measured here, its
# kernels compiled already): the router counts its arrival from then (a first start that compiles
# outlasts it, and is not counted on once overdue: gateway/routing/filters/arriving.py)
CLOUD_LOAD_S = 8.0
CLOUD_KV_CACHE_GIB = 1.0  # 23k tokens in float32: 64 chats beside long documents, no preemption


def register(commands: argparse._SubParsersAction) -> None:
    up = commands.add_parser(
        "up", help="run gateway + edge node + cloud worker on the demo model, in one command"
    )
    up.add_argument(
        "--config",
        help="gateway TOML file (keys, privacy, routing, limits, telemetry, more nodes); its "
        "[[models]] and [[edge_nodes]] are served beside the embedded ones",
    )
    up.add_argument("--port", type=int, default=None, help="default: the file's gateway.port, else 8080")
    up.add_argument("--host", default=None, help="default: the file's gateway.host, else 127.0.0.1")
    up.add_argument(
        "--redis",
        help="use this Redis for the cloud pool (default: the file's cloud.redis_url, else in-process)",
    )
    up.add_argument(
        "--edge-slots",
        type=int,
        default=8,
        help="concurrent sequences on the edge node, each with a 1024-token window (llama-server -np)",
    )
    up.add_argument(
        "--edge-threads",
        type=int,
        default=None,
        help="CPU threads of the edge node (default: half the cores; the cloud engine gets the rest)",
    )
    up.add_argument(
        "--model",
        action="append",
        metavar="[NAME=]FILE.gguf",
        help="serve this GGUF file (repeatable; NAME defaults to the file's stem); default: the demo model",
    )
    up.add_argument(
        "--privacy-ledger",
        help="the privacy ledger's file (default: the file's privacy.ledger, else "
        "$HYBRIDGW_HOME/privacy-ledger.jsonl; '' for none); one gateway writes a ledger at a time",
    )
    up.add_argument("--no-cloud", action="store_true", help="edge only")
    up.add_argument(
        "--no-prefix-caching", action="store_true", help="no prompt-prefix reuse on either tier (to compare)"
    )
    up.set_defaults(handler=_up)


def _spawn(args: list[str]) -> subprocess.Popen:
    environment = {**os.environ, ENV: str(os.getpid())}  # it stops when this process dies, however
    return subprocess.Popen(
        [sys.executable, "-m", "hybridgw", *args], stderr=subprocess.PIPE, text=True, env=environment
    )


def _await_line(process: subprocess.Popen, ready_text: str, name: str) -> str:
    """The child's log line holding `ready_text` (its progress shown meanwhile); its log is
    drained afterwards so it never blocks on a full pipe."""
    deadline, ready = time.monotonic() + 300, ""
    for line in process.stderr:
        if ready_text in line:
            ready = line
            break
        _show_progress(line)
        if time.monotonic() > deadline:
            break
    if process.poll() is not None or not ready:
        raise SystemExit(f"hybridgw: error: the {name} did not start")
    threading.Thread(target=lambda: [sys.stderr.write(line) for line in process.stderr], daemon=True).start()
    return ready


def _show_progress(line: str) -> None:
    """A child's kernel-compiling progress (its first start), as a line for the terminal."""
    if '"event": "compiling"' not in line:
        return
    with contextlib.suppress(ValueError, KeyError):
        state = json.loads(line)
        done = state["done"]
        print(
            human_line(state["kernel"], state["compiled"], state["elapsed_s"], done),
            file=sys.stderr,
            flush=True,
        )


def _up(args: argparse.Namespace) -> int:

    from formats.model_pull import DEFAULT_MODEL, pull
    from formats.model_pull import model_path as demo_model_path
    from gateway.config.toml_file import ConfigError, load_config
    from gateway.http.app import prepare_to_serve
    from gateway.serving import app_keys
    from hybridgw.serving import ensure_can_listen, serve_app
    from shared.telemetry import setup_tracing

    setup_logging()
    served = served_models(args.model) if args.model else {MODEL_NAME: str(demo_model_path(DEFAULT_MODEL))}
    if args.redis and len(served) > 1:
        raise SystemExit("hybridgw: error: --redis runs one cloud worker: give one --model with it")
    edge_ids = {name: EDGE_ID if i == 0 else f"edge-{name}" for i, name in enumerate(served)}
    # alone, the edge is where every request waits: as llama-server, it queues a whole burst
    bound = {"queue_bound": EDGE_ALONE_QUEUE_BOUND} if args.no_cloud else {}
    embedded = {
        "models": [{"name": name, "gguf": path} for name, path in served.items()],
        "edge_nodes": [  # each bound below
            {"id": edge_ids[name], "address": "127.0.0.1:0", "models": [name], **bound} for name in served
        ],
    }
    try:  # a bad file stops here, naming the field, before anything starts
        config, server = load_config(args.config, embedded=embedded)
    except ConfigError as error:
        raise SystemExit(f"hybridgw: error: {error}") from None
    host = args.host or server.host
    port = server.port if args.port is None else args.port  # 0: any free port
    ensure_can_listen(host, port)  # before the model pull and the nodes
    if not args.model:
        pull(DEFAULT_MODEL)  # to the demo model's path, when absent
    config.redis_url = None if args.no_cloud else (args.redis or config.redis_url)
    if args.privacy_ledger is not None:
        config.privacy_ledger = args.privacy_ledger or None
    telemetry = server.telemetry
    setup_tracing(
        telemetry.service_name if args.config else "hybridgw-up",
        telemetry.otlp_endpoint,
        telemetry.trace_file,
    )
    edge_threads, cloud_threads = _split_cores(args.edge_threads, cloud=not args.no_cloud)
    cores = SharedCores(os.cpu_count() or 1, cloud_threads)
    children: list[subprocess.Popen] = []
    # the edge nodes start first, with every core to compile on (edge/background_kernels.py); the
    # gateway is built meanwhile and serves on them as soon as they are up, while the cloud
    # engines load (and compile) after them, each joining the pool when loaded
    edges_up, cloud_loads = threading.Event(), []
    try:
        for name, model_path in served.items():
            children.append(_spawn_edge(args, model_path, edge_threads, edge_ids[name]))
        app = _gateway_app(config, args, served, (cores, set(edge_ids.values())), edges_up)
        prepare_to_serve(app)  # while the edge nodes start: the app's startup then only connects
        cloud_loads = [getattr(backend, "loading", None) for backend in app[app_keys.BACKENDS]]
        for edge, name in zip(list(children), served, strict=True):
            listening = json.loads(_await_line(edge, '"listening"', "edge node"))
            edge_port = int(listening["address"].rsplit(":", 1)[1])
            for node in config.edge_nodes:
                if node.node_id == edge_ids[name]:
                    node.address = f"127.0.0.1:{edge_port}"  # the port it bound (it was given 0)
            if config.redis_url:
                children.append(_start_cloud_worker(args, served[name], config, cloud_threads))
        edges_up.set()
        keyed = bool(config.api_keys)
        serve_app(
            app,
            host,
            port,
            announce=False,
            on_listening=lambda bound: _banner(host, bound, keyed, list(served)),
            keepalive_s=server.keepalive_s,
        )
    finally:
        _stop(children)
        for load in cloud_loads:  # one still loading is cancelled, or dies with this process
            if load is not None and not load.cancel() and load.done() and load.exception() is None:
                load.result().close()
        print("hybridgw: stopped", file=sys.stderr)
    return 0


def _gateway_app(config, args: argparse.Namespace, served: dict[str, str], local, edges_up):
    """The gateway, its in-process cloud engines loading once `edges_up` is set (their backends
    wait for them); `local`: (the cores shared here, the ids of the edge nodes on them), whose
    cores are lent to the cloud while those nodes are idle."""
    cores, local_edges = local
    from gateway.backends.local_cloud import LocalCloudBackend
    from gateway.http.app import create_app
    from gateway.serving import app_keys

    extra_backends = []
    if not config.redis_url and not args.no_cloud:
        caching = not args.no_prefix_caching
        # its first start's kernels compile in this process: then its load outlasts CLOUD_LOAD_S
        report_compile_progress(functools.partial(_cloud_progress, extra_backends))
        loads = [(_local_cloud_engine, (path, cores.cloud_threads, caching)) for path in served.values()]
        for name, load in zip(served, _in_background(loads, after=edges_up), strict=True):
            extra_backends.append(LocalCloudBackend(load, frozenset({name}), expected_load_s=CLOUD_LOAD_S))
    app = create_app(config, extra_backends)

    async def lend_idle_edge_cores(app) -> None:  # the edges' backends exist once the app started
        cores.edges = [b.state for b in app[app_keys.BACKENDS] if b.state.node_id in local_edges]

    app.on_startup.append(lend_idle_edge_cores)
    return app


def served_models(specs: list[str]) -> dict[str, str]:
    """`[NAME=]FILE.gguf` arguments -> {name: path}; each file must open as a GGUF file."""
    from formats.errors import FormatError
    from formats.gguf_reader import GGUFReader

    served: dict[str, str] = {}
    for spec in specs:
        name, _, path = spec.partition("=") if "=" in spec else ("", "", spec)
        name = name or Path(path).stem.lower()
        if name in served:
            raise SystemExit(f"hybridgw: error: --model {spec}: the name {name!r} is given twice")
        try:
            GGUFReader(path)
        except (FormatError, OSError) as error:
            raise SystemExit(f"hybridgw: error: --model {spec}: {error}") from None
        served[name] = str(Path(path).resolve())
    return served


def _spawn_edge(args: argparse.Namespace, model_path: str, threads: int, node_id: str) -> subprocess.Popen:
    """The edge node, on a port it picks (0; its listening line says which)."""
    print(f"starting the edge node {node_id} ...", file=sys.stderr)
    command = ["edge", "--model", model_path, "--port", "0", "--slots", str(args.edge_slots)]
    command += ["--ctx-size", str(EDGE_SLOT_CONTEXT * args.edge_slots), "--node-id", node_id]
    command += ["--threads", str(threads), *(["--no-prefix-caching"] if args.no_prefix_caching else [])]
    return _spawn(command)


def _start_cloud_worker(args: argparse.Namespace, model_path: str, config, threads: int) -> subprocess.Popen:
    print("starting a cloud worker on Redis ...", file=sys.stderr)
    command = ["cloud", "--model", model_path, "--redis", config.redis_url, "--prefix", config.redis_prefix]
    command += ["--kv-cache-gib", str(CLOUD_KV_CACHE_GIB), "--max-num-seqs", str(CLOUD_MAX_NUM_SEQS)]
    command += ["--grpc-port", "0"]
    command += ["--name", "cloud-local", "--threads", str(threads)]
    command += ["--no-prefix-caching"] if args.no_prefix_caching else []
    worker = _spawn(command)
    _await_line(worker, '"listening"', "cloud worker")
    return worker


def _stop(children: list[subprocess.Popen]) -> None:
    """SIGTERM (each drains), then wait; kill what does not stop in 30 s."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()


def _split_cores(edge_threads: int | None, cloud: bool) -> tuple[int, int]:
    """(edge threads, cloud threads): the tiers share this machine, so each gets its own cores.
    Both engines' kernels split every matmul over all their threads; with more threads than
    cores in all, each tier waits on threads the other has preempted (measured on 2 cores: a
    32-chat burst on both tiers made 60-70 tokens/s where the cloud engine alone made 109)."""
    cores = os.cpu_count() or 1
    if not cloud:
        return edge_threads or cores, 0
    edge = edge_threads or max(1, cores // 2)
    return edge, max(1, cores - edge)


def _cloud_progress(backends: list, *state) -> None:
    """A kernel compiling (a first start): the engines' arrival is not known any more."""
    print(f"cloud engine: {human_line(*state)}", file=sys.stderr, flush=True)
    for backend in backends:
        backend.compiling()


def _in_background(jobs: list[tuple[Callable, tuple]], after: threading.Event) -> list[Future]:
    """Runs each (function, arguments) in turn on a daemon thread once `after` is set (a stop
    while one runs does not wait for it): the futures of their results."""
    futures = [Future() for _ in jobs]

    def run() -> None:
        after.wait()
        for future, (function, arguments) in zip(futures, jobs, strict=True):
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(function(*arguments))
            except BaseException as error:  # the future carries it to its reader
                future.set_exception(error)

    threading.Thread(target=run, name="cloud-load", daemon=True).start()
    return futures


def _local_cloud_engine(model_path: str, num_threads: Callable[[], int], enable_prefix_caching: bool):
    """The in-process cloud engine, warmed (on a first start its kernels compile here)."""
    import torch

    from cloud.engine.llm_engine import LLMEngine
    from shared.async_engine import AsyncEngine

    print("loading the cloud engine in process (no Redis); the edge serves meanwhile ...", file=sys.stderr)
    torch.set_num_threads(num_threads())
    engine = LLMEngine(
        model_path,
        kv_cache_gib=CLOUD_KV_CACHE_GIB,
        max_num_seqs=CLOUD_MAX_NUM_SEQS,
        policy="slo",
        enable_prefix_caching=enable_prefix_caching,
        num_threads=num_threads,
    )
    # warmed on its own thread, where its steps run (shared/async_engine.py)
    async_engine = AsyncEngine(engine, prepare=engine.warmup)
    print("the cloud engine is ready: it takes requests now", file=sys.stderr, flush=True)
    return async_engine


def _banner(host: str, port: int, keyed: bool, models: list[str]) -> None:
    url = f"http://{host}:{port}"
    model = models[0]
    key = "$HYBRIDGW_API_KEY" if keyed else "none"
    auth = f" -H 'Authorization: Bearer {key}'" if keyed else ""
    print(
        f"""
hybridgw is up: {url}/v1   models: {", ".join(models)}   status page: {url}/

  curl {url}/v1/chat/completions -H 'Content-Type: application/json'{auth} \\
    -d '{{"model": "{model}", "messages": [{{"role": "user", "content": "Hello!"}}]}}'

  python -c "from openai import OpenAI; c = OpenAI(base_url='{url}/v1', api_key='{key}'); \\
print(c.chat.completions.create(model='{model}', \\
messages=[{{'role': 'user', 'content': 'Hello!'}}]).choices[0].message.content)"

Ctrl-C stops everything.
""",
        flush=True,
    )

"""`hybridgw cloud`: a cloud worker (Redis queue consumer + gRPC Inference service)."""

import argparse
import asyncio
import os
import socket
from pathlib import Path

from hybridgw.compile_progress import log_compiling, report_compile_progress
from hybridgw.logs import setup_logging


def register(commands: argparse._SubParsersAction) -> None:
    cloud = commands.add_parser(
        "cloud", help="run a cloud worker: Redis request stream + gRPC, vLLM-style engine"
    )
    cloud.add_argument(
        "--model", "-m", type=Path, required=True, help="GGUF file or safetensors checkpoint dir"
    )
    cloud.add_argument("--redis", default=os.environ.get("HYBRIDGW_REDIS_URL", "redis://127.0.0.1:6379/0"))
    cloud.add_argument("--prefix", default=os.environ.get("HYBRIDGW_REDIS_PREFIX", "hybridgw:"))
    cloud.add_argument("--name", default=None, help="consumer name (default: host-pid)")
    cloud.add_argument(
        "--signing-key",
        default=os.environ.get("HYBRIDGW_WORKER_SIGNING_KEY"),
        help="its signing key, hex (`hybridgw cloud-key --name NAME`; env HYBRIDGW_WORKER_SIGNING_KEY)",
    )
    cloud.add_argument("--max-num-seqs", type=int, default=64)
    cloud.add_argument("--max-num-batched-tokens", type=int, default=1024)
    cloud.add_argument("--block-size", type=int, default=16)
    cache = cloud.add_mutually_exclusive_group()
    cache.add_argument("--num-blocks", type=int)
    cache.add_argument("--kv-cache-gib", type=float, default=1.0)
    cloud.add_argument(
        "--dtype",
        choices=("float32", "bfloat16", "float16"),
        default=None,
        help="compute dtype (default: bfloat16 on CUDA and on CPUs with bfloat16 instructions, else float32)",
    )
    cloud.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's, one per core)"
    )
    cloud.add_argument("--no-prefix-caching", action="store_true", help="never reuse cached prompt blocks")
    cloud.add_argument("--host", default="127.0.0.1")
    cloud.add_argument(
        "--grpc-port", type=int, default=0, help="default 0: a free port (logged); a given one must be free"
    )
    cloud.add_argument("--claim-idle-ms", type=int, default=15_000)
    cloud.add_argument(
        "--metrics-port", type=int, default=None, help="HTTP port for Prometheus /metrics and /health/*"
    )
    cloud.set_defaults(handler=_cloud)
    key = commands.add_parser(
        "cloud-key",
        help="print a cloud worker's signing key, derived from $HYBRIDGW_CLOUD_SIGNING_SECRET",
    )
    key.add_argument("--name", required=True, help="the worker's --name")
    key.set_defaults(handler=_cloud_key)


def _signing_key(given: str | None, name: str) -> bytes | None:
    """--signing-key (one key per worker), else derived from $HYBRIDGW_CLOUD_SIGNING_SECRET (a
    staging convenience: whoever holds the secret can sign as any worker), else none."""
    from shared.chunk_signing import worker_key

    if given:
        try:
            return bytes.fromhex(given)
        except ValueError:
            raise SystemExit("hybridgw cloud: --signing-key must be hex (`hybridgw cloud-key`)") from None
    secret = os.environ.get("HYBRIDGW_CLOUD_SIGNING_SECRET")
    return worker_key(secret.encode(), name) if secret else None


def _cloud_key(args: argparse.Namespace) -> int:
    from shared.chunk_signing import worker_key

    secret = os.environ.get("HYBRIDGW_CLOUD_SIGNING_SECRET")
    if not secret:
        print("hybridgw: set HYBRIDGW_CLOUD_SIGNING_SECRET (the gateway's [cloud] signing_secret)")
        return 2
    print(worker_key(secret.encode(), args.name).hex())
    return 0


def _cloud(args: argparse.Namespace) -> int:
    import torch

    from cloud.engine.llm_engine import LLMEngine, default_device
    from cloud.worker.redis_worker import CloudWorker
    from hybridgw.serving_gc import prepare_gc_for_serving
    from shared import redis_client
    from shared.async_engine import AsyncEngine
    from shared.inference_server import serve
    from shared.redis_keys import RedisKeys
    from shared.telemetry import setup_tracing

    setup_logging()
    setup_tracing("hybridgw-cloud")
    report_compile_progress(log_compiling("hybridgw.cloud"))  # a first start's kernels
    if args.threads:
        torch.set_num_threads(args.threads)
    device = default_device()
    engine = LLMEngine(
        str(args.model),
        dtype=args.dtype or "auto",
        device=device,
        block_size=args.block_size,
        num_blocks=args.num_blocks,
        kv_cache_gib=args.kv_cache_gib,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        policy="slo",  # a request's priority (lower first) orders admission and preemption
        enable_prefix_caching=not args.no_prefix_caching,
        num_threads=args.threads or None,
    )
    name = args.name or f"cloud-{socket.gethostname()}-{os.getpid()}"

    async def main() -> None:
        async_engine = AsyncEngine(engine, prepare=engine.warmup)  # on the thread its steps run on
        client = redis_client.connect(args.redis)
        worker = CloudWorker(
            async_engine,
            client,
            RedisKeys(args.prefix),
            name,
            args.max_num_seqs,
            claim_idle_ms=args.claim_idle_ms,
            signing_key=_signing_key(args.signing_key, name),
        )
        try:
            await serve(
                async_engine,
                args.host,
                args.grpc_port,
                name,
                args.model.stem,
                companion=worker.run,
                metrics_port=args.metrics_port,
                ready_check=lambda: worker.connected,  # not ready while its Redis is gone
            )
        finally:
            await client.aclose()

    prepare_gc_for_serving()
    asyncio.run(main())
    return 0

"""`hybridgw run` (one-shot generation, like llama-cli) and `hybridgw edge` (the gRPC node)."""

import argparse
import asyncio
import os
import socket
import sys
import time
from pathlib import Path

from hybridgw.compile_progress import human_line, log_compiling, report_compile_progress
from hybridgw.logs import setup_logging

DEFAULT_THREADS = os.cpu_count() or 1


def register(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="generate text from a prompt with the edge engine")
    run.add_argument("--model", "-m", type=Path, required=True)
    run.add_argument("--prompt", "-p", required=True)
    run.add_argument("-n", "--max-tokens", type=int, default=128)
    run.add_argument("--temperature", type=float, default=0.8)
    run.add_argument("--top-k", type=int, default=40)
    run.add_argument("--top-p", type=float, default=0.95)
    run.add_argument("--seed", type=int)
    run.add_argument("--threads", "-t", type=int, default=DEFAULT_THREADS)
    run.add_argument("--ctx-size", "-c", type=int, default=4096)
    run.add_argument("--chat", action="store_true", help="apply the model's chat template to the prompt")
    run.add_argument("--verbose", action="store_true", help="print load time and speeds to stderr")
    _backend_argument(run)
    run.set_defaults(handler=_run)

    edge = commands.add_parser("edge", help="serve a GGUF model as an edge node (gRPC)")
    edge.add_argument("--model", "-m", type=Path, required=True)
    edge.add_argument("--host", default="127.0.0.1")
    edge.add_argument("--port", type=int, default=50051, help="0 picks a free port")
    edge.add_argument("--slots", type=int, default=4, help="concurrent sequences")
    edge.add_argument("--threads", "-t", type=int, default=DEFAULT_THREADS)
    edge.add_argument("--ctx-size", "-c", type=int, default=4096, help="context in all, shared by the slots")
    edge.add_argument("--node-id", default=None)
    edge.add_argument(
        "--no-prefix-caching", action="store_true", help="never reuse a slot's cached prompt prefix"
    )
    edge.add_argument(
        "--metrics-port", type=int, default=None, help="HTTP port for Prometheus /metrics and /health/*"
    )
    _backend_argument(edge)
    edge.set_defaults(handler=_edge)


def _backend_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=("numba", "onnxruntime"),
        default="numba",
        help="numba kernels on the file's blocks (default), or onnxruntime MatMulNBits "
        "(Q4_0/Q4_1/Q8_0/F16/F32 weights)",
    )


def _run(args: argparse.Namespace) -> int:
    from edge.engine import EdgeEngine, EngineConfig
    from edge.kernels.isa import describe as describe_kernels
    from formats.chat_template import chat_template_for
    from formats.tokenizer import GGUFTokenizer
    from shared.engine import EngineRequest
    from shared.sampling import SamplingParams

    started = time.perf_counter()
    report_compile_progress(lambda *state: print(human_line(*state), file=sys.stderr, flush=True))
    engine = EdgeEngine(
        EngineConfig(
            str(args.model),
            num_slots=1,
            context_size=args.ctx_size,
            num_threads=args.threads,
            backend=args.backend,
            background_compile=True,
        )
    )
    engine.warmup()
    tokenizer = GGUFTokenizer.from_metadata(engine.reader.metadata)
    loaded = time.perf_counter()
    text = args.prompt
    if args.chat:
        text = chat_template_for(engine.reader.metadata).render([{"role": "user", "content": text}])
    prompt_ids = tokenizer.encode(text, parse_special=args.chat)
    params = SamplingParams(
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        max_tokens=args.max_tokens,
    )
    engine.add(EngineRequest("run", tuple(prompt_ids), params))
    detokenizer = tokenizer.detokenizer(skip_special=True)
    if not args.chat:
        sys.stdout.write(args.prompt)
    first_token_at = None
    count = 0
    while engine.has_work():
        for output in engine.step().outputs:
            first_token_at = first_token_at or time.perf_counter()
            count += 1
            sys.stdout.write(detokenizer.push(output.token.token_id))
            sys.stdout.flush()
    finished = time.perf_counter()
    sys.stdout.write(detokenizer.flush() + "\n")
    sys.stdout.flush()
    if args.verbose:
        prompt_seconds = (first_token_at or finished) - loaded
        decode_seconds = finished - (first_token_at or finished)
        print(
            f"load: {(loaded - started) * 1000:.0f} ms | prompt: {len(prompt_ids)} tokens, "
            f"{len(prompt_ids) / max(prompt_seconds, 1e-9):.1f} tokens/s | generation: {count} tokens, "
            f"{max(count - 1, 0) / max(decode_seconds, 1e-9):.1f} tokens/s | first token after "
            f"{(first_token_at or finished) - started:.2f} s",
            file=sys.stderr,
        )
        print(f"kernels: {describe_kernels(engine.kernels)}", file=sys.stderr)
    return 0


def _edge(args: argparse.Namespace) -> int:
    from edge.engine import EdgeEngine, EngineConfig
    from hybridgw.serving_gc import prepare_gc_for_serving
    from shared.async_engine import AsyncEngine
    from shared.inference_server import serve
    from shared.telemetry import setup_tracing

    setup_logging()
    setup_tracing("hybridgw-edge")
    report_compile_progress(log_compiling("hybridgw.edge"))
    engine = EdgeEngine(
        EngineConfig(
            str(args.model),
            num_slots=args.slots,
            context_size=args.ctx_size,
            num_threads=args.threads,
            backend=args.backend,
            enable_prefix_caching=not args.no_prefix_caching,
            background_compile=True,
        )
    )
    async_engine = AsyncEngine(engine, prepare=engine.prepare_to_serve)
    prepare_gc_for_serving()
    node_id = args.node_id or f"edge-{socket.gethostname()}-{os.getpid()}"
    asyncio.run(
        serve(
            async_engine,
            args.host,
            args.port,
            node_id,
            args.model.stem,
            metrics_port=args.metrics_port,
        )
    )
    return 0

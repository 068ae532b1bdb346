"""`hybridgw gateway`: the OpenAI-compatible front door over edge nodes and the cloud pool."""

import argparse
import os

from hybridgw.logs import setup_logging


def register(commands: argparse._SubParsersAction) -> None:
    gateway = commands.add_parser("gateway", help="serve the OpenAI-compatible API over edge and cloud nodes")
    gateway.add_argument(
        "--config", help="TOML configuration file (fields overridable by HYBRIDGW_* variables)"
    )
    gateway.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=GGUF",
        help="a served model and the GGUF file its tokenizer and template come from",
    )
    gateway.add_argument(
        "--edge",
        action="append",
        default=[],
        metavar="ID=HOST:PORT[@MODEL,...]",
        help="an edge node (default: serves every model)",
    )
    gateway.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="ID=URL[@MODEL,...]",
        help='an OpenAI-compatible server (its /v1 URL) as an off-prem node (kind "cloud": never a '
        'private request; an on-prem one is an [[upstreams]] entry of kind "edge" in --config)',
    )
    gateway.add_argument(
        "--redis", default=os.environ.get("HYBRIDGW_REDIS_URL"), help="the cloud pool's Redis"
    )
    gateway.add_argument("--prefix", default=os.environ.get("HYBRIDGW_REDIS_PREFIX", "hybridgw:"))
    gateway.add_argument(
        "--edge-queue-bound",
        type=int,
        default=16,
        help="waiting requests per edge node beyond which it takes no more (429 when every node is full)",
    )
    gateway.add_argument(
        "--privacy-mode", choices=("auto", "strict", "always_private", "public"), default="auto"
    )
    gateway.add_argument(
        "--privacy-ledger",
        help="the privacy ledger's file (default $HYBRIDGW_HOME/privacy-ledger.jsonl; '' for none); "
        "its signing key is the file + '.key'",
    )
    gateway.add_argument("--latency-target-ms", type=float)
    gateway.add_argument("--keys", help="TOML file of API keys (sha256-hashed); without it the API is open")
    gateway.add_argument("--host", default="127.0.0.1")
    gateway.add_argument("--port", type=int, default=8080)
    gateway.add_argument(
        "--keepalive-s",
        type=float,
        default=75.0,
        help="seconds an idle client connection is kept open (default 75)",
    )
    gateway.set_defaults(handler=_gateway)


def _gateway(args: argparse.Namespace) -> int:

    from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry, RoutingPolicy
    from gateway.http.app import create_app
    from gateway.privacy import PrivacyMode
    from gateway.privacy.ledger import default_ledger_path
    from hybridgw.serving import serve_app
    from shared.telemetry import setup_tracing

    setup_logging()
    if args.config:
        from gateway.config.toml_file import ConfigError, load_config

        try:
            config, server = load_config(args.config)
        except ConfigError as error:
            raise SystemExit(f"hybridgw: error: {error}") from None
        telemetry = server.telemetry
        setup_tracing(telemetry.service_name, telemetry.otlp_endpoint, telemetry.trace_file)
        serve_app(create_app(config), server.host, server.port, keepalive_s=server.keepalive_s)
        return 0
    setup_tracing("hybridgw-gateway")
    if not args.model:
        raise SystemExit("hybridgw: error: give --config FILE or at least one --model NAME=GGUF")
    models = [ModelEntry(*_pair(spec, "--model")) for spec in args.model]
    names = [m.name for m in models]
    edges = []
    for spec in args.edge:
        node_id, rest = _pair(spec, "--edge")
        address, _, served = rest.partition("@")
        edges.append(
            EdgeNodeEntry(
                node_id, address, served.split(",") if served else names, queue_bound=args.edge_queue_bound
            )
        )
    upstreams = [_upstream(spec, names) for spec in args.upstream]
    from gateway.access.keys_file import load_keys

    config = GatewayConfig(
        models=models,
        edge_nodes=edges,
        upstreams=upstreams,
        redis_url=args.redis,
        redis_prefix=args.prefix,
        privacy_mode=PrivacyMode(args.privacy_mode),
        routing=RoutingPolicy(latency_target_ms=args.latency_target_ms),
        api_keys=load_keys(args.keys) if args.keys else [],
        privacy_ledger=str(default_ledger_path())
        if args.privacy_ledger is None
        else (args.privacy_ledger or None),
    )
    if not args.keepalive_s > 0:
        raise SystemExit("hybridgw: error: --keepalive-s must be > 0")
    serve_app(create_app(config), args.host, args.port, keepalive_s=args.keepalive_s)
    return 0


def _upstream(spec: str, names: list[str]):
    """ID=URL[@MODEL,...]: an off-prem upstream serving those models (default: every one)."""
    from gateway.config.gateway_config import UpstreamEntry

    node_id, rest = _pair(spec, "--upstream")
    url, at, served = rest.rpartition("@")
    if not at or "/" in served:  # no model list (an @ inside the URL belongs to it)
        url, served = rest, ""
    models = served.split(",") if served else names
    try:
        return UpstreamEntry(node_id, url, "cloud", {m: m for m in models})
    except ValueError as error:
        raise SystemExit(f"hybridgw: error: --upstream: {error}") from None


def _pair(spec: str, flag: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name or not value:
        raise SystemExit(f"hybridgw: error: {flag} expects NAME=VALUE, got {spec!r}")
    return name, value

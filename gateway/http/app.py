"""The gateway application factory: create_app(config) -> aiohttp Application."""

import asyncio
import contextlib
import random
import sys
from pathlib import Path

from aiohttp import web

from gateway.access.api_keys import KeyStore
from gateway.access.rate_limit import LocalRateLimiter, RedisRateLimiter
from gateway.backends.cloud import CloudBackend
from gateway.backends.edge import EdgeBackend
from gateway.backends.upstream import UpstreamBackend
from gateway.config.gateway_config import GatewayConfig
from gateway.core.served_model import ServedModel
from gateway.dialects.anthropic_messages import ANTHROPIC_MESSAGES
from gateway.dialects.openai_chat import OPENAI_CHAT
from gateway.dialects.openai_completions import OPENAI_COMPLETIONS
from gateway.dialects.openai_responses import OPENAI_RESPONSES
from gateway.dialects.openai_responses_store import LocalResponseStore, RedisResponseStore
from gateway.dispatch.dispatcher import Dispatcher
from gateway.http import (
    embeddings_route,
    model_routes,
    ollama_routes,
    openapi,
    responses_routes,
    service_routes,
    status_page,
)
from gateway.http.cors import install_cors
from gateway.http.error_answers import error_middleware
from gateway.http.limits import GUARD, ConnectionGuard, body_timeout_middleware
from gateway.http.token_count_route import count_tokens
from gateway.http.unknown_routes import unknown_route
from gateway.observability.metrics import GatewayMetrics
from gateway.privacy import stage_status
from gateway.privacy.ledger import PrivacyLedger, default_ledger_path
from gateway.privacy.ledger_redis import default_ledger_id, open_redis_ledger
from gateway.serving import app_keys
from gateway.serving.handler import DISPATCHER, endpoint
from shared import redis_client
from shared.redis_keys import RedisKeys
from shared.structured_output import GrammarError

LOOP_SWITCH_INTERVAL_S = 0.001  # how long a worker thread holds the GIL while the loop waits for it


def create_app(config: GatewayConfig, extra_backends: list | None = None) -> web.Application:
    """`extra_backends`: in-process nodes (the embedded default of `hybridgw up`). Sets the
    process's thread switch interval (LOOP_SWITCH_INTERVAL_S): the gateway is a latency server."""
    sys.setswitchinterval(LOOP_SWITCH_INTERVAL_S)
    middlewares = [error_middleware(config.max_body_bytes), body_timeout_middleware(config.http)]
    app = web.Application(middlewares=middlewares, client_max_size=config.max_body_bytes)
    app[GUARD] = ConnectionGuard(config.http)
    install_cors(app, config.cors_allow_origins)
    app[app_keys.CONFIG] = config
    app[app_keys.MODELS] = {
        m.name: ServedModel.load(m.name, m.gguf_path, m.context_length) for m in config.models
    }
    app[app_keys.BACKENDS] = list(extra_backends or [])
    app[app_keys.METRICS] = GatewayMetrics.create()
    app[DISPATCHER] = Dispatcher(
        app[app_keys.BACKENDS], config.routing, app[app_keys.METRICS], random.Random(), _ledger(config)
    )
    app[app_keys.ROUTER] = app[DISPATCHER].router
    app[app_keys.KEYS] = KeyStore(config.api_keys)
    app[app_keys.LIMITER] = LocalRateLimiter()  # replaced by the Redis limiter when Redis is configured
    app[app_keys.RESPONSES] = LocalResponseStore(config.responses_retention_hours * 3600)  # or Redis's
    app.cleanup_ctx.append(_backends)
    app.router.add_post("/v1/chat/completions", endpoint(OPENAI_CHAT))
    app.router.add_post("/v1/completions", endpoint(OPENAI_COMPLETIONS))
    app.router.add_post("/v1/responses", endpoint(OPENAI_RESPONSES))
    responses_routes.add_routes(app)  # retrieve, delete, input_items, cancel
    app.router.add_post("/v1/messages", endpoint(ANTHROPIC_MESSAGES))
    app.router.add_post("/v1/messages/count_tokens", endpoint(ANTHROPIC_MESSAGES, count_tokens))
    unknown = endpoint(ANTHROPIC_MESSAGES, unknown_route("Not Found", "Method Not Allowed"))
    app.router.add_route("*", "/v1/messages", unknown)  # another method: Anthropic's 405
    app.router.add_route("*", "/v1/messages/{tail:.*}", unknown)  # Anthropic's 404
    ollama_routes.add_routes(app)  # /api/chat, /api/generate, /api/tags, ...
    app.router.add_post("/v1/embeddings", embeddings_route.create_embeddings)
    app.router.add_get("/v1/models", model_routes.list_models)
    app.router.add_get("/v1/models/{model}", model_routes.retrieve_model)
    app.router.add_post("/tokenize", model_routes.tokenize)
    app.router.add_post("/detokenize", model_routes.detokenize)
    app.router.add_get("/tokenizer_info", model_routes.tokenizer_info)
    app.router.add_get("/health", service_routes.health_live)
    app.router.add_get("/health/live", service_routes.health_live)
    app.router.add_get("/health/ready", service_routes.health_ready)
    app.router.add_get("/metrics", service_routes.metrics)
    app.router.add_get("/openapi.json", openapi.openapi_json)
    app.router.add_get("/", status_page.status_page)
    app.router.add_get("/status", status_page.status_json)
    return app


def prepare_to_serve(app: web.Application) -> None:
    """What the app's startup does that needs no node: the detector stages loaded, each model's
    grammar vocabulary built (both cached; a process that starts its nodes itself, `hybridgw
    up`, runs this while they start, and the startup then only connects)."""
    stage_status()
    _warm_grammars(app[app_keys.MODELS])


def _warm_grammars(models: dict[str, ServedModel]) -> None:
    """Each model's grammar vocabulary, built before requests (the first build holds the GIL)."""
    for model in models.values():
        with contextlib.suppress(GrammarError):  # a model with no tokenizer for grammars
            model.grammars.tokenizer()


def _ledger_key_file(config: GatewayConfig) -> Path:
    path = config.privacy_ledger or str(default_ledger_path())
    return Path(config.privacy_ledger_key_file or f"{path}.key")


def _ledger(config: GatewayConfig) -> PrivacyLedger | None:
    """The file ledger (a Redis one opens with the Redis client, in _backends)."""
    if not config.privacy_ledger or config.privacy_ledger_store != "file":
        return None
    rotate_mb = config.privacy_ledger_rotate_mb
    return PrivacyLedger.open_file(
        Path(config.privacy_ledger),
        _ledger_key_file(config),
        config.privacy_ledger_fsync,
        int(rotate_mb * (1 << 20)) if rotate_mb else None,
        config.privacy_ledger_rotate_daily,
    )


async def _redis_ledger(config: GatewayConfig, client) -> PrivacyLedger:
    key_file = _ledger_key_file(config)
    ledger_id = config.privacy_ledger_id or default_ledger_id(key_file.parent)
    days = config.privacy_ledger_retention_days
    return await open_redis_ledger(
        client, config.redis_prefix, ledger_id, key_file, days * 86400 if days else None
    )


async def _backends(app: web.Application):
    """Edge channels, the Redis pool and their pollers live exactly as long as the app."""
    config = app[app_keys.CONFIG]
    backends = app[app_keys.BACKENDS]
    client = None
    for node in config.edge_nodes:
        backends.append(EdgeBackend(node.node_id, node.address, frozenset(node.models), node.queue_bound))
    tokenizers = {name: model.tokenizer for name, model in app[app_keys.MODELS].items()}
    for upstream in config.upstreams:
        backends.append(UpstreamBackend(upstream, tokenizers, config.routing.first_token_deadline_s))
    if config.redis_url:
        client = redis_client.connect(config.redis_url)
        models = frozenset(config.cloud_models or app[app_keys.MODELS])
        secret = config.cloud_signing_secret.encode() if config.cloud_signing_secret else None
        backends.append(CloudBackend(client, RedisKeys(config.redis_prefix), models, signing_secret=secret))
        app[app_keys.LIMITER] = RedisRateLimiter(client, config.redis_prefix)
        retention_s = config.responses_retention_hours * 3600
        app[app_keys.RESPONSES] = RedisResponseStore(client, config.redis_prefix, retention_s)
        if config.privacy_ledger_store == "redis":
            app[DISPATCHER].gate.ledger = await _redis_ledger(config, client)
    for backend in backends:
        await backend.start()
    await asyncio.to_thread(prepare_to_serve, app)  # the detector stages report before requests
    yield
    ledger = app[DISPATCHER].gate.ledger
    if ledger is not None:
        await ledger.aclose()
    for backend in backends:
        await backend.close()
    if client is not None:
        await client.aclose()

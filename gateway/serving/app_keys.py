"""Typed application keys: the gateway's shared state, set up by create_app (no singletons). The
Dispatcher's key is the handler's, which runs it (gateway/serving/handler.py: DISPATCHER), so what
only reads the configuration, the models or the keys does not stand above dispatch."""

from aiohttp import web

from gateway.access.api_keys import KeyStore
from gateway.backends.base import Backend
from gateway.config.gateway_config import GatewayConfig
from gateway.core.served_model import ServedModel
from gateway.observability.metrics import GatewayMetrics
from gateway.routing.router import Router

CONFIG = web.AppKey("config", GatewayConfig)
MODELS = web.AppKey("models", dict[str, ServedModel])
BACKENDS = web.AppKey("backends", list[Backend])
METRICS = web.AppKey("metrics", GatewayMetrics)
KEYS = web.AppKey("keys", KeyStore)
LIMITER = web.AppKey("limiter", object)  # LocalRateLimiter or RedisRateLimiter
ROUTER = web.AppKey("router", Router)  # the Dispatcher's, for routes beside dispatch (embeddings)
RESPONSES = web.AppKey("responses", object)  # LocalResponseStore or RedisResponseStore

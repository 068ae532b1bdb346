"""Typed application keys: the gateway's shared state, set up by create_app (no singletons)."""

from aiohttp import web

from gateway.access.api_keys import KeyStore
from gateway.backends.base import Backend
from gateway.config.gateway_config import GatewayConfig
from gateway.core.served_model import ServedModel
from gateway.dispatch.dispatcher import Dispatcher
from gateway.observability.metrics import GatewayMetrics

CONFIG = web.AppKey("config", GatewayConfig)
MODELS = web.AppKey("models", dict[str, ServedModel])
BACKENDS = web.AppKey("backends", list[Backend])
METRICS = web.AppKey("metrics", GatewayMetrics)
DISPATCHER = web.AppKey("dispatcher", Dispatcher)
KEYS = web.AppKey("keys", KeyStore)
LIMITER = web.AppKey("limiter", object)  # LocalRateLimiter or RedisRateLimiter
RESPONSES = web.AppKey("responses", object)  # LocalResponseStore or RedisResponseStore

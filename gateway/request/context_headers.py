"""What a request's headers ask of routing: its privacy class and its latency targets, with the
API key's and the [routing] section's defaults (gateway/request/sender_context.py holds the result)."""

import math

from aiohttp import web

from gateway.access.api_keys import ApiKey
from gateway.config.gateway_config import GatewayConfig, RoutingPolicy
from gateway.core.errors import invalid
from gateway.request.sender_context import ANONYMOUS_TENANT, RequestContext
from gateway.routing.route_types import LatencyTargets

PRIVACY_HEADER = "X-Hybridgw-Privacy"
TARGET_HEADERS = {  # LatencyTargets field -> (request header, key and [routing] field)
    "e2e_s": ("X-Hybridgw-Latency-Target-Ms", "latency_target_ms"),
    "ttft_s": ("X-Hybridgw-TTFT-Target-Ms", "ttft_target_ms"),
    "tpot_s": ("X-Hybridgw-TPOT-Target-Ms", "tpot_target_ms"),
}


def request_context(request: web.Request, key: ApiKey | None, config: GatewayConfig) -> RequestContext:
    return RequestContext(
        key.privacy_mode if key is not None else config.privacy_mode,
        request.headers.get(PRIVACY_HEADER),
        latency_targets(request, key, config.routing),
        key.tenant if key is not None else ANONYMOUS_TENANT,
    )


def latency_targets(request: web.Request, key: ApiKey | None, routing: RoutingPolicy) -> LatencyTargets:
    """Each target from its header, else the key's, else the [routing] default (milliseconds)."""
    seconds = {}
    for field, (header, setting) in TARGET_HEADERS.items():
        raw = request.headers.get(header)
        if raw is None:
            value = (getattr(key, setting) if key is not None else None) or getattr(routing, setting)
        else:
            try:
                value = float(raw)
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value <= 0:
                raise invalid(f"{header} must be a positive number of milliseconds.", code="invalid_header")
        seconds[field] = value / 1000 if value else None
    return LatencyTargets(**seconds)

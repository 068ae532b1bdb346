"""A node's HTTP side port: Prometheus /metrics and /health/live, /health/ready.

The gRPC port carries inference (and grpc.health.v1); this port is what Prometheus scrapes and
what a container healthcheck or load balancer probes. Metrics are read from the engine's
latest NodeStats snapshot at scrape time, so they never lag and cost nothing between scrapes.
"""

import json
import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from shared.async_engine import AsyncEngine

logger = logging.getLogger("hybridgw.node")

GAUGES = {
    "num_running": ("hybridgw_node_running_requests", "Requests being generated"),
    "num_waiting": ("hybridgw_node_waiting_requests", "Requests waiting for a slot or KV blocks"),
    "max_running": ("hybridgw_node_max_running_requests", "Concurrent requests the node runs at most"),
    "kv_usage": ("hybridgw_node_kv_cache_usage_ratio", "Fraction of the KV cache in use"),
    "prefill_tokens_per_s": ("hybridgw_node_prefill_tokens_per_second", "Measured prompt tokens/s"),
    "decode_tokens_per_s": ("hybridgw_node_decode_tokens_per_second", "Measured tokens/s per sequence"),
}
COUNTERS = {
    "requests_total": ("hybridgw_node_requests", "Requests finished"),
    "tokens_generated_total": ("hybridgw_node_generated_tokens", "Tokens generated"),
}


class NodeStatsCollector:
    """A Prometheus collector over AsyncEngine.stats (a NodeStats snapshot), by node and kind."""

    def __init__(self, engine: AsyncEngine, node_id: str):
        self.engine = engine
        self.node_id = node_id

    def collect(self):
        stats = self.engine.stats
        labels = ["node", "kind"]
        values = [self.node_id, stats.kind]
        for field, (name, help_text) in GAUGES.items():
            family = GaugeMetricFamily(name, help_text, labels=labels)
            family.add_metric(values, float(getattr(stats, field)))
            yield family
        draining = GaugeMetricFamily("hybridgw_node_draining", "1 while the node drains", labels=labels)
        draining.add_metric(values, float(self.engine.draining))
        yield draining
        for field, (name, help_text) in COUNTERS.items():
            family = CounterMetricFamily(name, help_text, labels=labels)
            family.add_metric(values, float(getattr(stats, field)))
            yield family


def create_node_app(
    engine: AsyncEngine, node_id: str, ready_check: Callable[[], bool] | None = None
) -> web.Application:
    """`ready_check`: what else the node needs to take requests (a cloud worker: its Redis)."""
    registry = CollectorRegistry()
    registry.register(NodeStatsCollector(engine, node_id))

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def live(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def ready(request: web.Request) -> web.Response:
        if engine.draining:
            return web.json_response({"status": "draining"}, status=503)
        if ready_check is not None and not ready_check():
            return web.json_response({"status": "not_ready", "node_id": node_id}, status=503)
        # an edge node says which kernel path its CPU selected (edge/kernels/isa.py)
        kernels = getattr(engine.engine, "kernels", None)
        body = {"node_id": node_id, **({"kernels": kernels} if kernels else {})}
        if engine.stats.compiling:  # serving, while faster kernels still compile (a first start)
            return web.json_response(
                {"status": "compiling", **body, "compiling": list(engine.stats.compiling)}
            )
        return web.json_response({"status": "ready", **body})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/health/live", live)
    app.router.add_get("/health/ready", ready)
    return app


async def start_node_http(
    engine: AsyncEngine, node_id: str, host: str, port: int, ready_check: Callable[[], bool] | None = None
) -> web.AppRunner:
    """Start the side port; the caller cleans the runner up when the node stops."""
    runner = web.AppRunner(create_node_app(engine, node_id, ready_check), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    logger.info(json.dumps({"event": "metrics_listening", "address": f"{host}:{bound}", "node_id": node_id}))
    return runner

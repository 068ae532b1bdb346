"""The endpoints about the service itself: liveness, readiness (its nodes and privacy stages) and
Prometheus metrics."""

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gateway.privacy import stage_status
from gateway.serving import app_keys
from gateway.serving.handler import DISPATCHER


async def health_live(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def health_ready(request: web.Request) -> web.Response:
    """Ready when a node is healthy and the privacy ledger (if kept) can store records: while it
    cannot, every request is refused, so the gateway is taken out of rotation until it can."""
    nodes = {b.state.node_id: b.state.healthy for b in request.app[app_keys.BACKENDS]}
    ledger = request.app[DISPATCHER].gate.ledger
    ledger_ok = ledger is None or await ledger.probe()
    ready = any(nodes.values()) and ledger_ok
    body = {"status": "ready" if ready else "unavailable", "nodes": nodes, "privacy_stages": stage_status()}
    if ledger is not None:
        outage = ledger.outage
        body["privacy_ledger"] = "writable" if outage is None else f"not writable: {outage.cause}"
    return web.json_response(body, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    registry = request.app[app_keys.METRICS]
    for backend in request.app[app_keys.BACKENDS]:
        registry.queue_depth.labels(backend.state.node_id).set(backend.state.num_waiting)
    return web.Response(
        body=generate_latest(registry.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
    )

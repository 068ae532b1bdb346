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
    """Ready (200) when a node is healthy and the privacy ledger (if kept) can store records: while
    it cannot, every request is refused, so the gateway is taken out of rotation until it can.
    `capacity` tells how much of it serves: "full" (every configured node healthy), "serving"
    (some: `hybridgw up` serves on its edge while its cloud engine loads) or "none" (503). A load
    balancer keeps the status code; one that wants the whole pool asks `?capacity=full`, 503 until
    then (docs/reliability.md)."""
    nodes = {b.state.node_id: b.state.healthy for b in request.app[app_keys.BACKENDS]}
    ledger = request.app[DISPATCHER].gate.ledger
    ledger_ok = ledger is None or await ledger.probe()
    capacity = serving_capacity(list(nodes.values())) if ledger_ok else "none"
    wanted = request.query.get("capacity", "serving")
    if wanted not in CAPACITIES[1:]:
        raise web.HTTPBadRequest(text='capacity: "serving" or "full"')
    ready = CAPACITIES.index(capacity) >= CAPACITIES.index(wanted)
    body = {"status": "ready" if ready else "unavailable", "capacity": capacity, "nodes": nodes}
    body["privacy_stages"] = stage_status()
    if ledger is not None:
        outage = ledger.outage
        body["privacy_ledger"] = "writable" if outage is None else f"not writable: {outage.cause}"
    return web.json_response(body, status=200 if ready else 503)


CAPACITIES = ("none", "serving", "full")


def serving_capacity(healthy: list[bool]) -> str:
    """ "full" when every node is healthy, "serving" when one is, else "none"."""
    if healthy and all(healthy):
        return "full"
    return "serving" if any(healthy) else "none"


async def metrics(request: web.Request) -> web.Response:
    registry = request.app[app_keys.METRICS]
    for backend in request.app[app_keys.BACKENDS]:
        registry.queue_depth.labels(backend.state.node_id).set(backend.state.num_waiting)
    return web.Response(
        body=generate_latest(registry.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
    )

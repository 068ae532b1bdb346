"""The live status page: GET / (one static HTML file, no build step) and GET /status (its JSON).

The page polls /status every second: the nodes with their load and health as the router sees
them, the recent routing decisions and latency percentiles. Nothing a prompt contained is shown.
"""

import time
from importlib import resources

from aiohttp import web

from gateway.privacy import stage_status
from gateway.routing.node_state import NodeState
from gateway.serving import app_keys

PAGE = resources.files("gateway.http").joinpath("static/status.html").read_bytes()


async def status_page(request: web.Request) -> web.Response:
    return web.Response(body=PAGE, content_type="text/html", charset="utf-8")


async def status_json(request: web.Request) -> web.Response:
    app = request.app
    recent = app[app_keys.METRICS].recent
    now = time.monotonic()
    return web.json_response(
        {
            "uptime_s": round(time.time() - recent.started, 1),
            "models": sorted(app[app_keys.MODELS]),
            "nodes": [_node(backend.state, now) for backend in app[app_keys.BACKENDS]],
            "decisions": recent.recent(),
            "latency": recent.latency(),
            "privacy_stages": stage_status(),
        },
        headers={"Cache-Control": "no-store"},
    )


def _node(state: NodeState, now: float) -> dict:
    cooling = state.cooldown_until > now
    health = "healthy" if state.healthy else ("starting" if state.starting else "down")
    return {
        "id": state.node_id,
        "kind": state.kind.value,
        "health": "cooling_down" if cooling else health,
        "models": sorted(state.models),
        "capabilities": sorted(state.capabilities),
        "running": state.num_running,
        "waiting": state.num_waiting,
        "own_requests": state.load.own_requests,  # this gateway's, live; the rest: other gateways'
        "prompt_tokens_ahead": state.load.prompt_tokens_ahead,
        "context_length": state.context_length,
        "cached_prefix_blocks": len(state.cached_block_hashes),
        "max_running": state.max_running,
        "queue_bound": state.queue_bound,
        "kv_usage": round(state.kv_usage, 4),
        "prefill_tokens_per_s": round(state.prefill_tokens_per_s, 1),
        "decode_tokens_per_s": round(state.decode_tokens_per_s, 1),
        "decode_steps_ms": {str(batch): round(seconds * 1000, 2) for batch, seconds in state.decode_steps},
        "prediction": state.calibration.summary(),
        "rtt_ms": round(state.rtt_s * 1000, 2),
    }

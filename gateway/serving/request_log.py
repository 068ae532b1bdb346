"""What a finished request leaves behind: metrics, the status page's recent activity, the
calibration of its node's predictions, the one structured log line, and its span's attributes."""

import json
import logging
import time

from gateway.core.generation_request import GenerationRequest
from gateway.observability.activity import RecentDecision
from gateway.observability.metrics import GatewayMetrics
from gateway.output.generation import Generation

logger = logging.getLogger("hybridgw.gateway")


def annotate(span, body: GenerationRequest, generation: Generation) -> None:
    span.set_attributes(
        {
            "gen_ai.request.model": body.model,
            "gen_ai.request.max_tokens": body.max_tokens or 0,
            "gen_ai.request.temperature": body.temperature,
            "gen_ai.request.top_p": body.top_p,
            "gen_ai.response.id": generation.request_id,
            "hybridgw.route.target": generation.target,
            "hybridgw.route.node": generation.node_id,
            "hybridgw.privacy.private": generation.privacy.is_private,
            "hybridgw.privacy.reason": generation.privacy.reason,
        }
    )


def logged_fields(request: GenerationRequest) -> dict:
    """What the client asked to be logged with its request: `metadata`, and whom it is for
    (`safety_identifier`, `user`: OpenAI asks for opaque ids there, and so do we)."""
    fields = {"metadata": request.metadata, "safety_identifier": request.safety_identifier}
    fields["user"] = request.user
    return {name: value for name, value in fields.items() if value}


def record(
    metrics: GatewayMetrics, generation: Generation, outcome: str, api: str = "", fields: dict | None = None
) -> None:
    """Metrics, the status page's recent activity, and the one structured log line of the request
    (`api`: the dialect it came in by, gateway/dialects/; `fields`: logged_fields)."""
    target = generation.target
    now = time.perf_counter()
    received = generation.received  # a request retried on another node waited from here
    ttft = generation.first_token_at - received if generation.first_token_at else None
    tpot = None
    if ttft is not None and generation.completion_tokens > 1:
        tpot = (now - generation.first_token_at) / (generation.completion_tokens - 1)
    decision = RecentDecision(
        at=time.time(),
        request_id=generation.request_id,
        model=generation.model,
        outcome=outcome,
        target=target,
        node=generation.node_id,
        reason=generation.route_reason,
        private=generation.privacy.is_private,
        privacy_reason=generation.privacy.reason,
        ttft_ms=round(ttft * 1000, 1) if ttft is not None else None,
        duration_ms=round((now - received) * 1000, 1),
        completion_tokens=generation.completion_tokens,
    )
    if outcome == "ok":
        generation.calibrate()
        if generation.observed is not None:
            metrics.predicted(generation.node_id, *generation.observed)
    if logger.isEnabledFor(logging.INFO):
        record = {
            "event": "request",
            "api": api,
            **decision.as_dict(),
            "prompt_tokens": generation.prompt_tokens,
            "cached_tokens": generation.cached_tokens,
            "predicted_cached_tokens": generation.predicted_cached_tokens,
            **(fields or {}),
        }
        if generation.prediction is not None:
            record["predicted_ttft_ms"] = round(generation.prediction.ttft_s * 1000, 1)
        if len(generation.alternatives) > 1:  # why this node: every candidate's (TTFT, TPOT) in ms
            record["predictions_ms"] = {
                p.node_id: [round(p.ttft_s * 1000), round(p.tpot_s * 1000)] for p in generation.alternatives
            }
        logger.info(json.dumps(record))
    metrics.recent.record(decision, tpot * 1000 if tpot is not None else None)
    metrics.finished(target, outcome, now - received, ttft, tpot)
    metrics.count_tokens(generation.prompt_tokens, generation.completion_tokens)


def record_abandoned(request_id: str, model: str, prompt_tokens: int, started: float) -> None:
    """The log line of a request whose client left before its first token (no generation to
    record: it was being routed or was waiting for a node)."""
    line = {
        "event": "request",
        "request_id": request_id,
        "model": model,
        "outcome": "cancelled",
        "stage": "before_first_token",
        "prompt_tokens": prompt_tokens,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    logger.info(json.dumps(line))

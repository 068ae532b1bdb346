"""POST /v1/embeddings: OpenAI's request and response, computed by an edge node (pooled final
hidden states, normalized: edge/embedding.py).

The inputs are tokenized here as generation prompts are and counted against the key's limits.
Only edge nodes compute embeddings, and they are on-prem: whatever the privacy classifier would
say, no input leaves; with no healthy edge node serving the model the answer is 503, never a
fallback elsewhere.
"""

import base64
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
import orjson
from aiohttp import web
from pydantic import Field

from gateway.backends.base import BackendError
from gateway.core.body_validation import validate_body
from gateway.core.capabilities import EMBEDDINGS
from gateway.core.errors import APIError, invalid
from gateway.core.strict_model import JSONInt, Strict
from gateway.dialects.openai_models import TOKEN_IDS
from gateway.routing.route_types import Outcome, RouteRequest
from gateway.serving import app_keys
from gateway.serving.admission import admit, authorized_model, request_key

MAX_INPUTS = 2048
EMBED_TIMEOUT_S = 120.0


class EmbeddingRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    input: (
        Annotated[str, Field(min_length=1)]
        | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=MAX_INPUTS)]
        | TOKEN_IDS
        | Annotated[list[TOKEN_IDS], Field(min_length=1, max_length=MAX_INPUTS)]
    )
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: JSONInt | None = None  # only the model's own size: a request for another is a 400
    user: str | None = None


async def create_embeddings(request: web.Request) -> web.Response:
    request_key(request)  # before the body is read
    body: EmbeddingRequest = validate_body(EmbeddingRequest, await request.read())
    if body.dimensions is not None:
        raise invalid("'dimensions' is not supported: embeddings have the model's own size.", "dimensions")
    embedded = await embed(request, body.model, _inputs(body))
    data = [
        {"object": "embedding", "index": i, "embedding": _encoded(v, body.encoding_format)}
        for i, v in enumerate(embedded.vectors)
    ]
    usage = {"prompt_tokens": embedded.num_tokens, "total_tokens": embedded.num_tokens}
    answer = {"object": "list", "data": data, "model": body.model, "usage": usage}
    return web.Response(body=orjson.dumps(answer), content_type="application/json", headers=embedded.where)


@dataclass(frozen=True, slots=True)
class Embedded:
    vectors: list[list[float]]
    num_tokens: int
    where: dict[str, str]  # the response headers naming the node


async def embed(request: web.Request, model_name: str, inputs: list[str | list[int]]) -> Embedded:
    """The inputs' embeddings from an edge node, once authorized and admitted (every API's
    embeddings endpoint: OpenAI's /v1/embeddings, Ollama's /api/embed)."""
    app = request.app
    key, model = authorized_model(request, model_name)
    ids = [list(i) if isinstance(i, list) else model.tokenizer.encode(i, add_special=True) for i in inputs]
    _check(ids, model)
    await admit(app, key, sum(map(len, ids)))
    backend = _edge_node(app, model_name, max(map(len, ids)))
    try:
        vectors = await backend.embed(model_name, ids, EMBED_TIMEOUT_S)
    except BackendError as error:
        raise APIError(error.status, str(error), code=error.code) from None
    where = {"X-Hybridgw-Target": "edge", "X-Hybridgw-Node": backend.state.node_id}
    return Embedded(vectors, sum(map(len, ids)), where)


def _inputs(body: EmbeddingRequest) -> list[str | list[int]]:
    given = body.input
    if isinstance(given, str) or isinstance(given[0], int):
        return [given]
    return list(given)


def _check(ids: list[list[int]], model) -> None:
    vocab = model.tokenizer.vocab_size
    for index, prompt in enumerate(ids):
        if not prompt or max(prompt) >= vocab:
            raise invalid(f"input[{index}] must be non-empty text or token ids below {vocab}.", "input")
        if len(prompt) > model.context_length:
            raise invalid(
                f"input[{index}] has {len(prompt)} tokens; this model takes {model.context_length}.",
                "input",
                "context_length_exceeded",
            )


def _edge_node(app: web.Application, model: str, num_tokens: int):
    """The edge node the routing policy picks for the inputs: a private request that needs
    embeddings, so only an on-prem node that computes them (gateway/core/capabilities.py)."""
    backends = app[app_keys.BACKENDS]
    request = RouteRequest(model, num_tokens, 0, True, needs=(EMBEDDINGS,))
    decision = app[app_keys.ROUTER].pick(request)
    if decision.outcome is not Outcome.ROUTED:
        raise APIError(503, f"No edge node serving '{model}' can compute embeddings now.", "server_error")
    return next(b for b in backends if b.state.node_id == decision.node_id)


def _encoded(vector: list[float], encoding: str) -> list[float] | str:
    if encoding == "float":
        return vector
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()

"""Ollama's API beside the generation dialect (gateway/dialects/ollama_api.py): the model list
(/api/tags), a model's details (/api/show), the loaded models (/api/ps: every served model is
loaded), the API version, embeddings (/api/embed, and the older /api/embeddings), and
/api/generate's empty prompt, which only loads a model. Same keys, model permissions and
Ollama's error shape (`{"error": "..."}`) as its generation endpoints."""

from datetime import UTC, datetime

import orjson
from aiohttp import web

from gateway.core.body_validation import validate_body
from gateway.core.errors import invalid
from gateway.core.served_model import ServedModel
from gateway.dialects.ollama_api import OLLAMA_CHAT, OLLAMA_GENERATE
from gateway.dialects.ollama_events import created_at
from gateway.dialects.ollama_models import EmbedRequest, GenerateRequest, LegacyEmbeddingRequest, ShowRequest
from gateway.http.embeddings_route import embed
from gateway.prompt.thinking_switch import has_thinking_switch
from gateway.serving import app_keys
from gateway.serving.admission import authorized_model
from gateway.serving.handler import endpoint, serve
from gateway.tools.tool_prompt import template_knows_tools

API_VERSION = "0.12.0"  # the Ollama API this gateway speaks (what clients check features against)
FAR_FUTURE = "2099-01-01T00:00:00Z"  # /api/ps: served models never unload


def _json(body: dict) -> web.Response:
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def generate(request: web.Request) -> web.StreamResponse:
    """/api/generate: an empty prompt loads the model (Ollama's preload), else a generation."""
    request.app[app_keys.KEYS].authenticate(request)
    body = validate_body(GenerateRequest, await request.read())  # the core reads it again, cached
    if body.prompt:
        return await serve(request, OLLAMA_GENERATE)
    model = authorized_model(request, body.model)[1]
    loaded = {
        "model": model.name,
        "created_at": created_at(),
        "response": "",
        "done": True,
        "done_reason": "load",
    }
    return _json(loaded)


def _details(model: ServedModel) -> dict:
    facts = model.facts
    family = facts.architecture if facts else "unknown"
    return {
        "parent_model": "",
        "format": "gguf",
        "family": family,
        "families": [family],
        "parameter_size": facts.parameter_size if facts else "",
        "quantization_level": facts.quantization if facts else "",
    }


def _card(model: ServedModel) -> dict:
    facts = model.facts
    modified = created_at() if facts is None else _iso(model.created)
    return {
        "name": model.name,
        "model": model.name,
        "modified_at": modified,
        "size": facts.size_bytes if facts else 0,
        "digest": facts.digest if facts else "",
        "details": _details(model),
    }


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _usable(request: web.Request) -> list[ServedModel]:
    key = request.app[app_keys.KEYS].authenticate(request)
    models = request.app[app_keys.MODELS].values()
    return [m for m in models if key is None or key.allowed_models is None or m.name in key.allowed_models]


async def tags(request: web.Request) -> web.Response:
    return _json({"models": [_card(m) for m in _usable(request)]})


async def running(request: web.Request) -> web.Response:
    models = [
        {**_card(m), "expires_at": FAR_FUTURE, "size_vram": 0, "context_length": m.context_length}
        for m in _usable(request)
    ]
    return _json({"models": models})


async def version(request: web.Request) -> web.Response:
    return _json({"version": API_VERSION})


async def show(request: web.Request) -> web.Response:
    body = validate_body(ShowRequest, await request.read())
    name = body.model or body.name
    if name is None:
        raise invalid("Missing required parameter: 'model'.", "model")
    model = authorized_model(request, name)[1]
    facts = model.facts
    architecture = facts.architecture if facts else "unknown"
    capabilities = ["completion"]
    capabilities += ["tools"] * template_knows_tools(model.chat_template.source)
    capabilities += ["thinking"] * has_thinking_switch(model)
    info = {
        "general.architecture": architecture,
        "general.parameter_count": facts.parameters if facts else 0,
        f"{architecture}.context_length": model.context_length,
    }
    return _json(
        {
            "modelfile": "",
            "parameters": "",
            "template": model.chat_template.source,
            "details": _details(model),
            "model_info": info,
            "capabilities": capabilities,
            "modified_at": _card(model)["modified_at"],
        }
    )


async def embed_inputs(request: web.Request) -> web.Response:
    request.app[app_keys.KEYS].authenticate(request)
    body = validate_body(EmbedRequest, await request.read())
    if body.truncate:
        raise invalid("'truncate': true is not supported: an input too long is an error.", "truncate")
    if body.dimensions is not None:
        raise invalid("'dimensions' is not supported: embeddings have the model's own size.", "dimensions")
    inputs = [body.input] if isinstance(body.input, str) else list(body.input)
    embedded = await embed(request, body.model, inputs)
    answer = {"model": body.model, "embeddings": embedded.vectors, "prompt_eval_count": embedded.num_tokens}
    return web.Response(body=orjson.dumps(answer), content_type="application/json", headers=embedded.where)


async def embed_prompt(request: web.Request) -> web.Response:
    """/api/embeddings, the older form: one prompt, one `embedding`."""
    request.app[app_keys.KEYS].authenticate(request)
    body = validate_body(LegacyEmbeddingRequest, await request.read())
    embedded = await embed(request, body.model, [body.prompt])
    return web.Response(
        body=orjson.dumps({"embedding": embedded.vectors[0]}), content_type="application/json"
    )


def add_routes(app: web.Application) -> None:
    """Every route answers errors in Ollama's shape (serving/handler.endpoint tags the handler)."""
    app.router.add_post("/api/chat", endpoint(OLLAMA_CHAT))
    app.router.add_post("/api/generate", endpoint(OLLAMA_GENERATE, generate))
    for method, path, handler in (
        ("POST", "/api/embed", embed_inputs),
        ("POST", "/api/embeddings", embed_prompt),
        ("GET", "/api/tags", tags),
        ("POST", "/api/show", show),
        ("GET", "/api/ps", running),
        ("GET", "/api/version", version),
    ):
        app.router.add_route(method, path, endpoint(OLLAMA_CHAT, handler))

"""GET /openapi.json: the OpenAPI 3.1 document of the generation endpoints, generated from the
declared request and response models (gateway/dialects/openai_models.py,
gateway/dialects/openai_response_models.py)."""

import functools

from aiohttp import web
from pydantic.json_schema import models_json_schema

from gateway.dialects.openai_models import ChatCompletionRequest, CompletionRequest
from gateway.dialects.openai_response_models import (
    ChatCompletion,
    ChatCompletionChunk,
    Completion,
    EmbeddingList,
    ErrorResponse,
)
from gateway.dialects.openai_responses import ResponsesRequest
from gateway.http.embeddings_route import EmbeddingRequest

REF = "#/components/schemas/{model}"


@functools.cache
def openapi_document() -> dict:
    models = [
        (ChatCompletionRequest, "validation"),
        (CompletionRequest, "validation"),
        (EmbeddingRequest, "validation"),
        (ResponsesRequest, "validation"),
        (EmbeddingList, "serialization"),
        (ChatCompletion, "serialization"),
        (ChatCompletionChunk, "serialization"),
        (Completion, "serialization"),
        (ErrorResponse, "serialization"),
    ]
    _, schemas = models_json_schema(models, ref_template=REF)
    return {
        "openapi": "3.1.0",
        "info": {"title": "hybridgw", "version": "1"},
        "paths": {
            "/v1/chat/completions": _operation(
                "ChatCompletionRequest", "ChatCompletion", "ChatCompletionChunk"
            ),
            "/v1/completions": _operation("CompletionRequest", "Completion", "Completion"),
            "/v1/embeddings": _operation("EmbeddingRequest", "EmbeddingList", None),
            "/v1/responses": _operation("ResponsesRequest", None, None),
        },
        "components": {"schemas": schemas["$defs"]},
    }


def _operation(request: str, answer: str | None, chunk: str | None) -> dict:
    """`answer`/`chunk`: the declared response models (None: documented by OpenAI's reference,
    as the Responses API's typed events are)."""
    ref = lambda name: {"$ref": REF.format(model=name)}  # noqa: E731
    error = {
        "description": "an OpenAI error",
        "content": {"application/json": {"schema": ref("ErrorResponse")}},
    }
    return {
        "post": {
            "requestBody": {"required": True, "content": {"application/json": {"schema": ref(request)}}},
            "responses": {
                "200": {
                    "description": "the answer (JSON), or with `stream: true` server-sent events of chunks",
                    "content": {
                        "application/json": {"schema": ref(answer) if answer else {"type": "object"}},
                        **({"text/event-stream": {"schema": ref(chunk)}} if chunk else {}),
                    },
                },
                "400": error,
                "429": error,
                "503": error,
            },
        }
    }


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())

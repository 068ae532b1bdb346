"""The endpoints about models rather than generations: GET /v1/models, GET /v1/models/{model},
and vLLM's POST /tokenize, POST /detokenize and GET /tokenizer_info (the same request and
response shapes; `model` may be left out when the key may use one model only), each behind the
same API keys and model permissions as generation."""

import functools
from typing import Annotated

import orjson
from aiohttp import web
from pydantic import Discriminator, Field, Tag, TypeAdapter

from gateway.core.body_validation import validate_body
from gateway.core.errors import invalid
from gateway.core.off_loop import off_loop
from gateway.core.served_model import ServedModel
from gateway.core.strict_model import JSONInt
from gateway.dialects.openai_models import ChatMessage, Strict
from gateway.prompt.chat_prompt import chat_prompt_ids
from gateway.request.prepared_request import refuse_beyond_any_context
from gateway.serving import app_keys
from gateway.serving.admission import authorized_model


class TokenizeCompletionRequest(Strict):
    model: str | None = None
    prompt: str
    add_special_tokens: bool = True


class TokenizeChatRequest(Strict):
    model: str | None = None
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    add_generation_prompt: bool = True  # the only rendering the gateway does (False is refused)


TokenizeRequest = TypeAdapter(
    Annotated[
        Annotated[TokenizeChatRequest, Tag("chat")] | Annotated[TokenizeCompletionRequest, Tag("completion")],
        Discriminator(lambda body: "chat" if isinstance(body, dict) and "messages" in body else "completion"),
    ]
)


class DetokenizeRequest(Strict):
    model: str | None = None
    tokens: list[Annotated[JSONInt, Field(ge=0)]]


def _model_card(model: ServedModel) -> dict:
    return {
        "id": model.name,
        "object": "model",
        "created": model.created,
        "owned_by": "hybridgw",
        "max_model_len": model.context_length,
    }


async def list_models(request: web.Request) -> web.Response:
    key = request.app[app_keys.KEYS].authenticate(request)
    models = [
        m
        for m in request.app[app_keys.MODELS].values()
        if key is None or key.allowed_models is None or m.name in key.allowed_models
    ]
    return web.json_response({"object": "list", "data": [_model_card(m) for m in models]})


async def retrieve_model(request: web.Request) -> web.Response:
    return web.json_response(_model_card(_allowed_model(request, request.match_info["model"])))


async def tokenize(request: web.Request) -> web.Response:
    raw = await request.read()
    body = validate_body(TokenizeRequest, raw)
    model = _allowed_model(request, body.model)
    if isinstance(body, TokenizeChatRequest):
        if not body.add_generation_prompt:
            raise invalid("'add_generation_prompt': false is not supported.", "add_generation_prompt")
        messages = [{"role": m.role, "content": m.text} for m in body.messages]
        refuse_beyond_any_context(model, sum(len(m["content"] or "") for m in messages), "messages")
        job = functools.partial(chat_prompt_ids, model, messages)
    else:
        refuse_beyond_any_context(model, len(body.prompt), "prompt")
        job = functools.partial(
            model.tokenizer.encode, body.prompt, add_special=body.add_special_tokens, parse_special=False
        )
    tokens = await off_loop(len(raw), job)
    body = {"count": len(tokens), "max_model_len": model.context_length, "tokens": tokens}
    return web.Response(body=orjson.dumps(body), content_type="application/json")  # 10x json's speed


async def detokenize(request: web.Request) -> web.Response:
    body = validate_body(DetokenizeRequest, await request.read())
    model = _allowed_model(request, body.model)
    if any(token >= model.tokenizer.vocab_size for token in body.tokens):
        raise invalid(f"token ids must lie in [0, {model.tokenizer.vocab_size}).", "tokens")
    return web.json_response({"prompt": model.tokenizer.decode(body.tokens)})


async def tokenizer_info(request: web.Request) -> web.Response:
    """vLLM's GET /tokenizer_info (what lm-eval's remote tokenizer reads), for `?model=`."""
    model = _allowed_model(request, request.query.get("model"))
    tokenizer = model.tokenizer

    def text(token_id: int | None) -> str | None:
        return None if token_id is None else tokenizer.token_text(token_id)

    return web.json_response(
        {
            "tokenizer_class": "GGUFTokenizer",
            "model": model.name,
            "bos_token": text(tokenizer.bos_token_id),
            "eos_token": text(tokenizer.eos_token_id),
            "pad_token": text(tokenizer.vocab.padding_token_id),
            "vocab_size": tokenizer.vocab_size,
            "model_max_length": model.context_length,
            "add_bos_token": tokenizer.vocab.add_bos,
            "chat_template": model.chat_template.source,
        }
    )


def _allowed_model(request: web.Request, name: str | None) -> ServedModel:
    """The named model, or with no name the only one the key may use."""
    key = request.app[app_keys.KEYS].authenticate(request)
    models = request.app[app_keys.MODELS]
    if name is None:
        usable = [m for m in models if key is None or key.allowed_models is None or m in key.allowed_models]
        if len(usable) != 1:
            raise invalid("Name the model: this server serves more than one.", "model")
        name = usable[0]
    return authorized_model(request, name)[1]

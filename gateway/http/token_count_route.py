"""POST /v1/messages/count_tokens (Anthropic's): the number of prompt tokens a Messages request
would have, its system, turns and tools rendered by the model's chat template as for
generation, behind the same keys and model permissions (http/app.py gives it Anthropic's error
shapes)."""

import orjson
from aiohttp import web

from gateway.core.off_loop import off_loop
from gateway.dialects.anthropic_messages import ANTHROPIC_MESSAGES, parse_count_tokens
from gateway.request.prepared_request import prompt_chars, prompt_ids, refuse_beyond_any_context
from gateway.serving import app_keys
from gateway.serving.admission import authorized_model


async def count_tokens(request: web.Request) -> web.Response:
    request.app[app_keys.KEYS].authenticate(request)
    ANTHROPIC_MESSAGES.check_headers(request.headers)
    raw = await request.read()
    body = parse_count_tokens(raw)
    _, model = authorized_model(request, body.model)
    refuse_beyond_any_context(model, prompt_chars(body), "messages")
    prompts = await off_loop(len(raw), prompt_ids, model, body)
    return web.Response(body=orjson.dumps({"input_tokens": len(prompts[0])}), content_type="application/json")

"""A completions body as the core request: POST /v1/completions bodies (gateway/dialects/
openai_models.py) and the completions fields Ollama's raw /api/generate translates into."""

from gateway.backends.client_request import client_fields
from gateway.core.body_validation import validate_body, validate_fields
from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.openai_models import CompletionRequest, LenientCompletionRequest
from gateway.dialects.openai_sampling import sampling_request


def parse_completion(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    model = LenientCompletionRequest if allow_unknown else CompletionRequest
    return completion_request(validate_body(model, raw))


def completion_fields_request(fields: dict) -> GenerationRequest:
    """A body another dialect translated into completions' fields (Ollama's raw /api/generate), as
    Python values, under the same rules and errors as a completions body."""
    return completion_request(validate_fields(CompletionRequest, fields))


def completion_request(body: CompletionRequest) -> GenerationRequest:
    """A validated completions body as the core request."""
    prompt = body.prompt
    one = isinstance(prompt, str) or (bool(prompt) and isinstance(prompt[0], int))
    request = sampling_request(body, messages=None, prompts=[prompt] if one else list(prompt))
    request.logprobs = body.logprobs is not None
    request.top_logprobs = body.logprobs or 0
    request.echo = body.echo
    request.return_token_ids = body.return_token_ids
    request.client_fields = client_fields(body)
    if body.max_tokens == 0 and not body.echo:
        raise invalid("'max_tokens' may be 0 only with 'echo': true.", "max_tokens")
    return request

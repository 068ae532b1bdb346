"""A request ready to route: its served model, the parsed body, the prompt's token ids (chat
template applied), the number of tokens to generate, and who sent it."""

from dataclasses import dataclass

from gateway.chat_prompt import chat_prompt_ids
from gateway.errors import invalid
from gateway.models import ServedModel
from gateway.request_context import RequestContext
from gateway.schemas import GenerationRequest
from gateway.tool_request import template_input


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    request_id: str
    model: ServedModel
    body: GenerationRequest
    prompt_ids: list[int]
    max_tokens: int
    context: RequestContext
    forwarded: dict[str, str] | None = None  # the caller's trace headers when no spans are recorded
    structured_output: str = ""  # the compiled grammar the output must match ("" for none)


def prompt_ids(model: ServedModel, request: GenerationRequest) -> list[int]:
    """Chat: the template's control tokens only (gateway/chat_prompt.py); a completion's prompt
    is text, special-token text included."""
    if request.messages is not None:
        messages, extra = template_input(model, request)
        return chat_prompt_ids(model, messages, extra)
    return model.tokenizer.encode(request.prompt or "", add_special=True, parse_special=False)


def prepare(model: ServedModel, request: GenerationRequest) -> tuple[list[int], int]:
    """Prompt ids and the number of tokens to generate, checked against the context window."""
    ids = prompt_ids(model, request)
    room = model.context_length - len(ids)
    if room < 1:
        raise invalid(
            f"This model's maximum context length is {model.context_length} tokens; the prompt has "
            f"{len(ids)} tokens.",
            "messages" if request.messages else "prompt",
            "context_length_exceeded",
        )
    _check_token_ids(model, request)
    max_tokens = request.max_tokens or room
    if max_tokens > room:
        raise invalid(
            f"max_tokens ({max_tokens}) plus the prompt ({len(ids)} tokens) exceeds the context length "
            f"of {model.context_length}.",
            "max_tokens",
            "context_length_exceeded",
        )
    if request.min_tokens > max_tokens:
        raise invalid(f"'min_tokens' ({request.min_tokens}) exceeds max_tokens ({max_tokens}).", "min_tokens")
    return ids, max_tokens


def _check_token_ids(model: ServedModel, request: GenerationRequest) -> None:
    vocab = model.tokenizer.vocab_size
    for name, ids in (("logit_bias", request.logit_bias), ("stop_token_ids", request.stop_token_ids)):
        if any(i >= vocab for i in ids):
            raise invalid(f"'{name}' holds token ids outside this model's vocabulary of {vocab}.", name)

"""A request ready to route: its served model, the parsed body, the token ids of each prompt
(chat template applied; a completion may have several prompts, each given as text or as token
ids), the number of tokens to generate, and who sent it."""

from dataclasses import dataclass

import orjson

from gateway.core.capabilities import request_needs
from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.core.served_model import ServedModel
from gateway.prompt.chat_prompt import chat_prompt_ids
from gateway.request.sender_context import RequestContext
from gateway.tools.tool_request import template_input


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    request_id: str
    model: ServedModel
    body: GenerationRequest
    prompts: tuple[list[int], ...]  # one per prompt; a chat has one
    max_tokens: int  # what the node generates (1 for an echo with max_tokens 0)
    context: RequestContext
    forwarded: dict[str, str] | None = None  # the caller's trace headers when no spans are recorded
    structured_output: str = ""  # the compiled grammar the output must match ("" for none)

    @property
    def prompt_ids(self) -> list[int]:
        """The first prompt (what routing and prefix matching look at)."""
        return self.prompts[0]

    @property
    def needs(self) -> dict[str, str]:
        """What its node must be able to do, and the parameter asking for each."""
        return request_needs(self.body)

    @property
    def num_choices(self) -> int:
        return len(self.prompts) * self.body.n

    def choice_prompt(self, index: int) -> list[int]:
        """Choices are numbered prompt by prompt: index = prompt * n + sample."""
        return self.prompts[index // self.body.n]

    @property
    def num_prompt_tokens(self) -> int:
        return sum(len(p) for p in self.prompts)

    def prompt_text(self, prompt: int) -> str:
        given = self.body.prompts[prompt]
        return given if isinstance(given, str) else self.model.tokenizer.decode(given)


def prompt_ids(model: ServedModel, request: GenerationRequest) -> list[list[int]]:
    """Chat: the template's control tokens only (gateway/prompt/chat_prompt.py); a completion's text
    prompt is text, special-token text included; token ids are taken as they are."""
    if request.messages is not None:
        messages, extra = template_input(model, request)
        return [chat_prompt_ids(model, messages, extra)]
    tokenizer = model.tokenizer
    return [
        list(p) if isinstance(p, list) else tokenizer.encode(p, add_special=True, parse_special=False)
        for p in request.prompts
    ]


# No tokenizer writes more characters per token on average: a prompt longer than the context
# window times this cannot fit, and is refused before it is templated or tokenized
MAX_CHARS_PER_TOKEN = 32


def refuse_beyond_any_context(model: ServedModel, text_chars: int, param: str) -> None:
    if text_chars > model.context_length * MAX_CHARS_PER_TOKEN:
        raise invalid(
            f"This model's maximum context length is {model.context_length} tokens; the prompt has "
            f"{text_chars} characters, more than any prompt that fits.",
            param,
            "context_length_exceeded",
        )


def prompt_chars(request: GenerationRequest) -> int:
    """The characters of the request's prompt text (messages and their tool calls, or prompts)."""
    if request.messages is not None:
        return len(orjson.dumps(request.messages, default=str))
    return sum(len(p) for p in request.prompts if isinstance(p, str))


def prepare(model: ServedModel, request: GenerationRequest) -> tuple[tuple[list[int], ...], int]:
    """Every prompt's ids and the number of tokens to generate, checked against the context
    window (the model's, or a smaller one the request asks for) and the vocabulary."""
    window = context_window(model, request)
    prompts = prompt_ids(model, request)
    longest = max(prompts, key=len)
    param = "messages" if request.messages else "prompt"
    room = window - len(longest)
    if not all(prompts):
        raise invalid("A prompt must not be empty.", param)
    if room < 1:
        raise invalid(
            f"This model's maximum context length is {window} tokens; the prompt has {len(longest)} tokens.",
            param,
            "context_length_exceeded",
        )
    _check_token_ids(model, request, prompts)
    max_tokens = room if request.max_tokens is None else max(1, request.max_tokens)
    if max_tokens > room:
        raise invalid(
            f"max_tokens ({max_tokens}) plus the prompt ({len(longest)} tokens) exceeds the context length "
            f"of {window}.",
            "max_tokens",
            "context_length_exceeded",
        )
    if request.min_tokens > max_tokens:
        raise invalid(f"'min_tokens' ({request.min_tokens}) exceeds max_tokens ({max_tokens}).", "min_tokens")
    return tuple(prompts), max_tokens


def context_window(model: ServedModel, request: GenerationRequest) -> int:
    """The model's window, or the smaller one Ollama's options.num_ctx asks for (a larger one
    cannot be given: a 400 naming it)."""
    if request.num_ctx is None:
        return model.context_length
    if request.num_ctx > model.context_length:
        message = (
            f"'options.num_ctx' ({request.num_ctx}) exceeds the model's window of {model.context_length}."
        )
        raise invalid(message, "options.num_ctx")
    return request.num_ctx


def _check_token_ids(model: ServedModel, request: GenerationRequest, prompts: list[list[int]]) -> None:
    vocab = model.tokenizer.vocab_size
    named = [("logit_bias", request.logit_bias), ("stop_token_ids", request.stop_token_ids)]
    for name, ids in [*named, *(("prompt", p) for p in prompts)]:
        if any(i >= vocab for i in ids):
            raise invalid(f"'{name}' holds token ids outside this model's vocabulary of {vocab}.", name)

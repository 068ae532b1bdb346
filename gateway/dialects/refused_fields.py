"""The fields each dialect declares but does not implement, refused by name. (What a Responses,
Anthropic Messages or Ollama body becomes is a chat or completions body's fields, validated as
they are by the chat rules: gateway/dialects/openai_chat_request.py.)"""

from gateway.core.errors import invalid


def refuse_declared(body, refused: dict[str, str]) -> None:
    """A 400 naming the first field of `refused` (name: why) the body sets (None and false are
    not asking for it)."""
    for name, why in refused.items():
        if getattr(body, name, None) not in (None, False):
            raise invalid(f"'{name}' is not supported: {why}.", name, "unsupported_parameter")

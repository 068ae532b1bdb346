"""The chat request body a dialect's own body becomes (Responses, Anthropic Messages, Ollama all
translate into it), encoded for the chat parser so that one set of rules validates them all; and
the fields each declares but does not implement, refused by name."""

import orjson

from gateway.core.errors import invalid


def chat_body(fields: dict) -> bytes:
    """`fields` as JSON; an integer past 64 bits inside free-form JSON (a tool's schema) is a 400."""
    try:
        return orjson.dumps(fields)
    except TypeError:
        raise invalid("The request holds an integer outside the signed 64-bit range.") from None


def refuse_declared(body, refused: dict[str, str]) -> None:
    """A 400 naming the first field of `refused` (name: why) the body sets (None and false are
    not asking for it)."""
    for name, why in refused.items():
        if getattr(body, name, None) not in (None, False):
            raise invalid(f"'{name}' is not supported: {why}.", name, "unsupported_parameter")

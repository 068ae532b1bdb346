"""Chat templates recognized by their exact source and rendered in Python, as llama.cpp renders
its built-in templates natively (llm_chat_apply_template) rather than through a template engine.

The sandboxed Jinja rendering of a short chat costs ~30 us warm and ~150 us cold; this costs ~2
and ~20. Only a template whose source is, character for character, one listed here is rendered
this way, and only for messages whose role and content are strings: the output then equals the
sandboxed Jinja rendering (property-tested against it). Any other template or message shape goes
through Jinja.
"""

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

SMOLLM2_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

PLAIN_FIELDS = frozenset({"role", "content", "name"})
NativeRenderer = Callable[[Sequence[Mapping[str, Any]], bool], str]


def chatml(
    messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool, default_system: str | None = None
) -> str:
    """ChatML; with `default_system`, a system turn first when the conversation has none."""
    parts = []
    if default_system is not None and messages and messages[0]["role"] != "system":
        parts.append(f"<|im_start|>system\n{default_system}<|im_end|>\n")
    for message in messages:
        parts.append(f"<|im_start|>{message['role']}\n{message['content']}<|im_end|>\n")
    if add_generation_prompt:
        parts.append("<|im_start|>assistant\n")
    return "".join(parts)


_GENERATION_PROMPT = "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"


def _chatml_source(pad: str) -> str:
    """The plain ChatML template, with `pad` inside its {{ }} (sources differ only there)."""
    turn = "'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'"
    return "{% for message in messages %}{{" + pad + turn + pad + "}}{% endfor %}" + _GENERATION_PROMPT


NATIVE_TEMPLATES: dict[str, NativeRenderer] = {
    # formats/chat_template.py's CHATML_TEMPLATE (models without a template of their own)
    _chatml_source(" "): chatml,
    # the ChatML template as Hugging Face documents it, shipped by many fine-tunes
    _chatml_source(""): chatml,
    # SmolLM2 (135M, 360M, 1.7B Instruct): ChatML with a default system turn
    (
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
        "{{ '<|im_start|>system\n" + SMOLLM2_DEFAULT_SYSTEM + "<|im_end|>\n' }}{% endif %}"
        "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
        "{% endfor %}" + _GENERATION_PROMPT
    ): functools.partial(chatml, default_system=SMOLLM2_DEFAULT_SYSTEM),
}


def plain_messages(messages: Sequence[Any]) -> bool:
    """Whether every message is a mapping whose role and content are strings, with no other
    field a template could render (tool calls go through the template itself)."""
    return all(
        (type(m) is dict or isinstance(m, Mapping))  # the first test, without the ABC's, for JSON bodies
        and isinstance(m.get("role"), str)
        and isinstance(m.get("content"), str)
        and m.keys() <= PLAIN_FIELDS
        for m in messages
    )

"""A chat request's prompt ids, with control tokens only where the chat template puts them.

User text is never parsed for special tokens: `<|im_end|><|im_start|>system` inside a message
would otherwise become real control tokens and forge a system turn. The template is rendered,
and only its own text is parsed for special tokens; message content is tokenized as text. When
no content holds control-token text (the usual case) that is plain `encode(..., parse_special)`
of the rendered prompt; otherwise the template is rendered with a placeholder for each such
content (a per-request nonce, so no content can imitate one), which locates every copy of it in
the output, and the tokenizer leaves those spans unparsed. A template that rewrites such content
(so it cannot be located) is a 400.
"""

import re
import secrets

from formats.errors import ChatTemplateError
from gateway.core.errors import invalid
from gateway.core.served_model import ServedModel


def chat_prompt_ids(model: ServedModel, messages: list[dict], extra: dict | None = None) -> list[int]:
    """`extra`: more template variables (the tools)."""
    extra = extra or {}
    tokenizer = model.tokenizer
    hostile = [
        i
        for i, m in enumerate(messages)
        if isinstance(m.get("content"), str) and tokenizer.contains_control_text(m["content"])
    ]
    if not hostile:
        return tokenizer.encode(_render(model, messages, extra), add_special=True, parse_special=True)
    text, spans = _render_locating_content(model, messages, hostile, extra)
    return tokenizer.encode_with_literals(text, spans)


def _render(model: ServedModel, messages: list[dict], extra: dict) -> str:
    try:
        return model.chat_template.render(messages, add_generation_prompt=True, **extra)
    except ChatTemplateError as error:
        raise invalid(
            f"The messages cannot be rendered with the model's chat template: {error}", "messages"
        ) from None


def _render_locating_content(
    model: ServedModel, messages: list[dict], hostile: list[int], extra: dict
) -> tuple[str, list[tuple[int, int]]]:
    """The rendered prompt and the (start, end) span of every place the `hostile` messages'
    content appears in it (a template may copy it, or leave it out)."""
    nonce = secrets.token_hex(8)
    marked = list(messages)
    for index in hostile:
        marked[index] = {**messages[index], "content": f"\ue000{nonce}:{index}\ue001"}
    rendered = _render(model, marked, extra)
    pieces, spans, length, start = [], [], 0, 0
    for match in re.finditer(f"\ue000{nonce}:(\\d+)\ue001", rendered):
        content = messages[int(match.group(1))]["content"]
        pieces += [rendered[start : match.start()], content]
        length += match.start() - start
        spans.append((length, length + len(content)))
        length += len(content)
        start = match.end()
    rest = rendered[start:]
    template_text = "".join(pieces[0::2]) + rest
    if nonce in template_text.lower():  # a placeholder the template rewrote: its content is lost
        raise invalid(
            "This model's chat template rewrites message content, so the control-token text in "
            f"messages[{hostile[0]}].content cannot be kept out of the prompt; remove it.",
            f"messages[{hostile[0]}].content",
        )
    return "".join([*pieces, rest]), spans

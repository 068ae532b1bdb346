"""Chat templates (`tokenizer.chat_template`) rendered the way Hugging Face renders them, in a sandbox.

A template comes from a model file, so it is untrusted input. It runs in jinja2's immutable
sandbox (no attribute access to Python internals, no mutation of its arguments), and on top of
that under a budget: a bounded number of loop iterations, bounded string/list growth, bounded
output, no `str.format`. Anything that breaks those rules raises `ChatTemplateError`.
"""

import functools
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import jinja2
import jinja2.ext
import jinja2.sandbox

from formats.errors import ChatTemplateError
from formats.native_templates import NATIVE_TEMPLATES, plain_messages

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

MAX_TEMPLATE_CHARS = 256 * 1024
MAX_OUTPUT_CHARS = 8 * 1024 * 1024
MAX_LOOP_ITERATIONS = 1_000_000
MAX_SEQUENCE_LENGTH = 1_000_000  # result of `*` on strings and lists
_PERCENT_FIELD = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")


class TemplateRaisedError(ChatTemplateError):
    """The template itself rejected its input via `raise_exception` (e.g. roles not alternating)."""


class _BudgetedSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%"})

    def __init__(self) -> None:
        super().__init__(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
        self.loop_budget = MAX_LOOP_ITERATIONS

    def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for sequence, count in ((left, right), (right, left)):
                is_repeat = isinstance(sequence, str | list | tuple) and isinstance(count, int)
                if is_repeat and len(sequence) * max(count, 0) > MAX_SEQUENCE_LENGTH:
                    raise ChatTemplateError("chat template builds a sequence that is too large")
            return left * right
        if operator == "**":
            if isinstance(left, int) and isinstance(right, int) and abs(right) > 64:
                raise ChatTemplateError("chat template raises a number to too large a power")
            return left**right
        if isinstance(left, str):
            _check_percent_format(left)
        return left % right

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise jinja2.sandbox.SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} is unsafe"
        )

    def wrap_str_format(self, value: Any):
        if super().wrap_str_format(value) is None:
            return None

        def refuse(*args: Any, **kwargs: Any) -> None:
            raise ChatTemplateError("str.format is not allowed in chat templates")

        return refuse

    def call(__self, __context, __obj, *args, **kwargs):
        _check_numbers(args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def budgeted_range(self, *args: int) -> range:
        numbers = range(*args)
        self.loop_budget -= len(numbers)
        if self.loop_budget < 0 or len(numbers) > MAX_SEQUENCE_LENGTH:
            raise ChatTemplateError("chat template loops too many times")
        return numbers


def _check_numbers(args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Width-like arguments (str.center, |indent, |wordwrap...) are how a template asks for a
    gigabyte string in one call; refuse numbers beyond any sane width."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SEQUENCE_LENGTH:
            raise ChatTemplateError("chat template passes an out-of-range number to a function")


def _bounded_filter(fn):
    @functools.wraps(fn)  # keeps jinja's pass_context/pass_environment markers
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_numbers(args, kwargs)
        return fn(*args, **kwargs)

    return bounded


def _check_percent_format(fmt: str) -> None:
    for width, precision in _PERCENT_FIELD.findall(fmt):
        for number in (width, precision):
            if number == "*" or (number and int(number) > 10_000):
                raise ChatTemplateError("chat template uses a too-wide % format field")


def _raise_exception(message: str) -> None:
    raise TemplateRaisedError(str(message))


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators=None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class ChatTemplate:
    """A compiled chat template; `render` returns the prompt text (special tokens as text)."""

    def __init__(self, source: str | None, bos_token: str = "", eos_token: str = ""):
        self.source = source if source else CHATML_TEMPLATE
        self.is_fallback = not source
        self.bos_token = bos_token
        self.eos_token = eos_token
        if len(self.source) > MAX_TEMPLATE_CHARS:
            raise ChatTemplateError(f"chat template is longer than {MAX_TEMPLATE_CHARS} characters")
        self._native = NATIVE_TEMPLATES.get(self.source)  # a known template, rendered in Python
        self._environment = _BudgetedSandbox()
        self._environment.filters["tojson"] = _tojson
        for name, fn in list(self._environment.filters.items()):
            self._environment.filters[name] = _bounded_filter(fn)
        self._environment.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now)
        self._environment.globals["range"] = self._environment.budgeted_range
        try:
            self._template = self._environment.from_string(self.source)
        except jinja2.TemplateSyntaxError as exc:
            raise ChatTemplateError(
                f"chat template does not parse: {exc.message} (line {exc.lineno})"
            ) from None
        except (RecursionError, MemoryError):
            raise ChatTemplateError("chat template is too deeply nested to compile") from None

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        add_generation_prompt: bool = True,
        **extra: Any,
    ) -> str:
        if self._native is not None and not extra and plain_messages(messages):
            text = self._native(messages, add_generation_prompt)
            if len(text) > MAX_OUTPUT_CHARS:
                raise ChatTemplateError(f"chat template output exceeds {MAX_OUTPUT_CHARS} characters")
            return text
        self._environment.loop_budget = MAX_LOOP_ITERATIONS
        variables = {
            "messages": [dict(m) for m in messages],
            "add_generation_prompt": add_generation_prompt,
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
            **extra,
        }
        pieces: list[str] = []
        size = 0
        try:
            for piece in self._template.generate(variables):
                size += len(piece)
                if size > MAX_OUTPUT_CHARS:
                    raise ChatTemplateError(f"chat template output exceeds {MAX_OUTPUT_CHARS} characters")
                pieces.append(piece)
        except ChatTemplateError:
            raise
        except jinja2.sandbox.SecurityError as exc:
            raise ChatTemplateError(f"chat template tried to leave its sandbox: {exc}") from None
        except RecursionError:
            raise ChatTemplateError("chat template recursed too deeply") from None
        except MemoryError:
            raise ChatTemplateError("chat template ran out of memory") from None
        except Exception as exc:  # any other failure inside untrusted template code
            raise ChatTemplateError(f"chat template failed: {type(exc).__name__}: {exc}") from None
        return "".join(pieces)


def chat_template_for(metadata: Mapping[str, Any], tokens: Sequence[str] | None = None) -> ChatTemplate:
    """The model's template (or ChatML) with its BOS/EOS token texts filled in."""
    tokens = tokens if tokens is not None else metadata.get("tokenizer.ggml.tokens") or []

    def token_text(key: str) -> str:
        token_id = metadata.get(key)
        return tokens[token_id] if isinstance(token_id, int) and 0 <= token_id < len(tokens) else ""

    source = metadata.get("tokenizer.chat_template")
    return ChatTemplate(
        source if isinstance(source, str) else None,
        bos_token=token_text("tokenizer.ggml.bos_token_id"),
        eos_token=token_text("tokenizer.ggml.eos_token_id"),
    )

"""`reasoning_effort` and `verbosity` as the model's chat template takes them: templates with a
thinking switch (Qwen3's `enable_thinking`, and templates that read `reasoning_effort` themselves,
as gpt-oss's does) get it set; a model whose template has no such switch refuses both by name,
rather than accept a setting that would change nothing (asking it for no reasoning, "none" or
"minimal", is what it does already).

    reasoning_effort "none" | "minimal"      -> enable_thinking = false
    reasoning_effort "low" | "medium" | "high" -> enable_thinking = true
Either field also reaches the template under its own name (`reasoning_effort`, `verbosity`) for
templates that read it.
"""

from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.core.served_model import ServedModel

SWITCHES = ("enable_thinking", "reasoning_effort")
NO_THINKING = frozenset({"none", "minimal"})


def has_thinking_switch(model: ServedModel) -> bool:
    source = model.chat_template.source
    return any(switch in source for switch in SWITCHES)


def thinking_variables(model: ServedModel, request: GenerationRequest) -> dict:
    """The template variables the request's reasoning_effort and verbosity set ({} for none)."""
    asked = {
        k: v
        for k, v in (("reasoning_effort", request.reasoning_effort), ("verbosity", request.verbosity))
        if v
    }
    if not asked:
        return {}
    if not has_thinking_switch(model):
        if request.reasoning_effort in NO_THINKING and request.verbosity is None:
            return {}  # no reasoning asked of a model that has none: nothing to switch
        name = next(iter(asked))
        raise invalid(
            f"'{name}' is not supported by the model '{model.name}': its chat template has no "
            "thinking switch.",
            name,
            "unsupported_parameter",
        )
    variables = dict(asked)
    if request.reasoning_effort is not None:
        variables["enable_thinking"] = request.reasoning_effort not in NO_THINKING
    return variables

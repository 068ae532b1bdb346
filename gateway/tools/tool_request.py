"""A chat request's tools, per model: what the chat template is given, the grammar that
`tool_choice` "required" or a named function imposes, and the parser that reads calls back."""

import json

from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest, offers_tools
from gateway.core.served_model import ServedModel
from gateway.prompt.thinking_switch import thinking_variables
from gateway.tools.tool_call_formats import tool_call_format
from gateway.tools.tool_call_parser import ToolCallParser
from gateway.tools.tool_prompt import fallback_messages, template_knows_tools
from gateway.tools.tool_schema import closed_objects
from shared.structured_output import StructuredOutputsParams

ANY_OBJECT = {"type": "object"}


def template_input(model: ServedModel, request: GenerationRequest) -> tuple[list[dict], dict]:
    """The messages and extra variables for the chat template: the tools (when offered) and tool
    turns as the template's own, or written into plain turns by the fallback prompt."""
    tools = request.tools if offers_tools(request) else []
    has_tool_turns = any(m.get("tool_calls") or m["role"] == "tool" for m in request.messages)
    thinking = thinking_variables(model, request)  # gateway/prompt/thinking_switch.py
    if not (tools or has_tool_turns):
        return request.messages, thinking
    if not template_knows_tools(model.chat_template.source):
        return fallback_messages(request.messages, tools), thinking
    _refuse_control_text(model, request, tools)
    return request.messages, {"tools": tools, **thinking} if tools else thinking


def _refuse_control_text(model: ServedModel, request: GenerationRequest, tools: list[dict]) -> None:
    """The template writes tools and call arguments into the prompt itself, where their text
    would be parsed for special tokens: control-token text there could forge a turn."""
    tokenizer = model.tokenizer
    if tools and tokenizer.contains_control_text(json.dumps(tools, ensure_ascii=False)):
        raise invalid("Tool definitions must not contain the model's control-token text.", "tools")
    for index, message in enumerate(request.messages):
        for call in message.get("tool_calls") or ():
            if tokenizer.contains_control_text(json.dumps(call, ensure_ascii=False)):
                raise invalid(
                    "Tool calls must not contain the model's control-token text.",
                    f"messages[{index}].tool_calls",
                )


def output_constraint(
    model: ServedModel, request: GenerationRequest
) -> tuple[StructuredOutputsParams, str] | None:
    """What the output must match, tools and structured output together, as OpenAI defines it:
    a forced call (tool_choice "required" or a named function) is the call grammar alone (the
    output format governs a text answer, and there is none); with tools offered on "auto" and an
    output format, either calls or the formatted answer; otherwise the format, if any."""
    forced = tool_constraint(model, request)
    structured = request.structured_outputs
    if forced is not None or structured is None or not offers_tools(request):
        return forced or structured
    params, name = structured
    answer = answer_rule(params, name)
    calls = _call_grammar(
        model, request, [t["function"]["name"] for t in request.tools], request.parallel_tool_calls
    )
    grammar = calls.replace("start:", "calls:", 1)
    return StructuredOutputsParams(grammar=f"start: calls | structured_answer\n{grammar}\n{answer}"), name


def answer_rule(params: StructuredOutputsParams, name: str) -> str:
    """The structured output as a Lark rule `structured_answer` (llguidance's %json for schemas)."""
    if params.json_object:
        return f"structured_answer: %json {json.dumps({'type': 'object'})}"
    if params.json is not None:
        schema = params.json if isinstance(params.json, dict) else json.loads(params.json)
        return f"structured_answer: %json {json.dumps(schema)}"
    if params.choice is not None:
        return "structured_answer: " + " | ".join(json.dumps(choice) for choice in params.choice)
    if params.regex is not None:
        return f"structured_answer: /{params.regex.replace('/', chr(92) + '/')}/"
    raise invalid(f"'{name}' as a grammar cannot be combined with tools on tool_choice 'auto'.", name)


def tool_constraint(
    model: ServedModel, request: GenerationRequest
) -> tuple[StructuredOutputsParams, str] | None:
    """With tool_choice "required" or a named function, the grammar of the model's call format
    whose arguments match each function's parameter schema (an object schema without
    `additionalProperties` takes no other keys: gateway/tools/tool_schema.py)."""
    if not request.tools or request.tool_choice in ("none", "auto"):
        return None
    names = [
        t["function"]["name"]
        for t in request.tools
        if request.tool_choice == "required" or t["function"]["name"] == request.tool_name
    ]
    parallel = request.parallel_tool_calls and request.tool_choice == "required"
    return StructuredOutputsParams(grammar=_call_grammar(model, request, names, parallel)), "tool_choice"


def _call_grammar(model: ServedModel, request: GenerationRequest, names: list[str], parallel: bool) -> str:
    functions = [
        (t["function"]["name"], closed_objects(t["function"].get("parameters") or ANY_OBJECT))
        for t in request.tools
        if t["function"]["name"] in names
    ]
    return tool_call_format(model.chat_template.source).grammar(functions, parallel)


def tool_parser(
    model: ServedModel, request: GenerationRequest, max_tokens: int | None = None
) -> ToolCallParser | None:
    """`max_tokens`: the answer's budget (decoding stops once no further call could finish)."""
    if request.messages is None or not offers_tools(request):
        return None
    names = frozenset(t["function"]["name"] for t in request.tools)
    fmt = tool_call_format(model.chat_template.source)
    return ToolCallParser(
        fmt, names, request.parallel_tool_calls, max_tokens, request.max_tool_calls, stream_arguments=True
    )

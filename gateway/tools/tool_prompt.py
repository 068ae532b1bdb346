"""How tools and tool turns reach the model: through its chat template when the template knows
tools (Hugging Face's `tools` variable, assistant `tool_calls`, `tool` messages), or else
through the documented fallback below, which writes them into ordinary turns.

The fallback (docs/tools.md), the convention of Hermes-style models such as Qwen 2.5: a system
turn lists the functions as JSON inside <tools></tools> and asks for each call as
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; an earlier assistant call is written
back in that form, and a tool's answer becomes a user turn inside <tool_response></tool_response>.
"""

import json

TOOLS_SYSTEM_PROMPT = """# Tools

You can call functions to help with the user's request. Their signatures, as JSON:
<tools>
{tools}
</tools>

To call a function, answer with a JSON object holding its name and its arguments inside
<tool_call></tool_call> tags, one block per call:
<tool_call>
{{"name": <function name>, "arguments": <arguments as a JSON object>}}
</tool_call>"""


def template_knows_tools(source: str) -> bool:
    return "tools" in source and "tool_call" in source


def fallback_messages(messages: list[dict], tools: list[dict]) -> list[dict]:
    """The conversation as plain role/content turns: the tools in the system turn (prepended to
    the caller's system text, if any), calls and tool answers written as text."""
    turns = [_plain(m) for m in messages]
    if not tools:
        return turns
    listing = TOOLS_SYSTEM_PROMPT.format(tools="\n".join(json.dumps(t, ensure_ascii=False) for t in tools))
    if turns and turns[0]["role"] == "system":
        return [{"role": "system", "content": f"{turns[0]['content']}\n\n{listing}"}, *turns[1:]]
    return [{"role": "system", "content": listing}, *turns]


def _plain(message: dict) -> dict:
    if message["role"] == "tool":
        return {"role": "user", "content": f"<tool_response>\n{message['content']}\n</tool_response>"}
    calls = message.get("tool_calls")
    if not calls:
        return {"role": message["role"], "content": message["content"]}
    blocks = [
        "<tool_call>\n"
        + json.dumps(
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}, ensure_ascii=False
        )
        + "\n</tool_call>"
        for c in calls
    ]
    text = "\n".join([message["content"], *blocks] if message["content"] else blocks)
    return {"role": "assistant", "content": text}

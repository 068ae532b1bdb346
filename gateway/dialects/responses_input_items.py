"""A stored response's own input as the Responses API lists it (GET /v1/responses/{id}/
input_items): the chat turns it was given, back as items, each with an id (messages with
input_text parts, an assistant's text as output_text, its calls as function_call items, tool
turns as function_call_output)."""


def input_items(messages: list[dict], response_id: str) -> list[dict]:
    items: list[dict] = []
    for message in messages:
        items += _items(message)
    for number, item in enumerate(items):
        item.setdefault("id", f"item_{response_id.removeprefix('resp_')}_{number}")
    return items


def _items(message: dict) -> list[dict]:
    role, content = message["role"], message.get("content")
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": content or ""}]
    calls = [
        {
            "type": "function_call",
            "call_id": call["id"],
            "name": call["function"]["name"],
            "arguments": call["function"]["arguments"],
            "status": "completed",
        }
        for call in message.get("tool_calls") or ()
    ]
    if not content:
        return calls
    kind = "output_text" if role == "assistant" else "input_text"
    if isinstance(content, str):
        parts = [{"type": kind, "text": content}]
    else:
        parts = [_part(part, kind) for part in content]
    return [{"type": "message", "role": role, "content": parts, "status": "completed"}, *calls]


def _part(part: dict, kind: str) -> dict:
    if part.get("type") == "image_url":
        return {"type": "input_image", "image_url": part["image_url"]["url"], "detail": "auto"}
    return {"type": kind, "text": part.get("text", "")}

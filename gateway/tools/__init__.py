"""Function calling: the declared tools (tool_models.py, tool_schema.py), how they reach the
prompt (tool_prompt.py, tool_request.py), the formats models write calls in (tool_call_formats.py) and
the parser that reads calls back as the answer streams (tool_call_parser.py, tool_call_stream.py,
tool_call_cut.py).

May import: core/, prompt/."""

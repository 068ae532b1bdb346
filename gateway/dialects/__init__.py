"""One module per API dialect: its body parsed into the core request (openai_chat_request.py,
openai_completion_request.py, openai_responses.py, anthropic_messages.py, ollama_api.py: a body
that translates into chat or completions is validated as the values it becomes, never encoded and
parsed again) and a writer that emits its bytes from core events (openai_chat.py,
openai_completions.py, *_events.py, wire_format.py). The seam is `Dialect` (dialect.py). State that
only one dialect has lives with it and is reached through the Dialect's hooks: Responses' stored
responses (openai_responses_store.py, openai_responses_previous.py, its `dialect_fields`).

May import: core/, prompt/, tools/, output/, backends/ (the client's own fields)."""

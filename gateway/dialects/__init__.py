"""One module per API dialect: its body parsed into the core request (openai_chat.py,
openai_completions.py, openai_responses.py, anthropic_messages.py, ollama_api.py) and a writer that
emits its bytes from core events (*_events.py, wire_format.py). The seam is `Dialect` (dialect.py).
State that only one dialect has lives with it: Responses' stored responses
(openai_responses_store.py, openai_responses_previous.py).

May import: core/, prompt/, tools/, output/, backends/ (the client's own fields)."""

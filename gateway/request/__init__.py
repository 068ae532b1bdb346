"""A generation request as it is prepared for routing: the request ready to route, with its served
model, its prompt token ids and its context, who sent it and what it asks of routing
(prepared_request.py); the prompts templated and tokenized against the context window
(prompt_tokens.py); the context read from the request's headers and key (context_headers.py).

May import: core/, prompt/, tools/, config/, privacy/, routing/."""

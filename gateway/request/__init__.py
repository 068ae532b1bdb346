"""A generation request as it is prepared for routing: who sent it and what it asks of routing
(sender_context.py, set from its headers by context_headers.py) and the request ready to route, with
its served model and prompt token ids (prepared_request.py).

May import: core/, prompt/, tools/, access/, config/, privacy/, routing/."""

"""The vocabulary every part of the gateway shares: the typed core request every dialect parses
into (generation_request.py), the errors a client sees (errors.py), strict request models and their
validation, the served models (served_model.py, model_facts.py), what a request needs of a node
(capabilities.py) and the executor for slow per-request work (off_loop.py).

May import: formats/, shared/ only. Everything else in gateway/ may import it."""

"""The front door: the aiohttp application (app.py) and its routes (*_routes.py, *_route.py,
status_page.py, openapi.py), middleware (cors.py, error_answers.py), the connection limits (limits.py)
and errors raised before a request reaches the app (protocol_errors.py). static/ holds the status
page.

May import: anything in gateway/; nothing imports it but the CLI and tests."""

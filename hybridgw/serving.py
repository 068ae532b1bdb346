"""Running the gateway's aiohttp app from the CLI: a busy or invalid address is a clear error."""

import socket
import sys

from hybridgw.serving_gc import prepare_gc_for_serving
from shared.errors import ListenError


def ensure_can_listen(host: str, port: int) -> None:
    """Fail now, naming the address, if it cannot be bound (before anything else is started)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as error:
        raise ListenError(f"cannot listen on {host}:{port}: {error.strerror}") from None


def serve_app(app, host: str, port: int, announce: bool = True) -> None:
    """web.run_app until SIGINT/SIGTERM; the app's cleanup (nodes, Redis) runs on the way out."""
    from aiohttp import web

    ensure_can_listen(host, port)
    app.on_startup.append(_prepare_gc)  # after the app's own startup (nodes, Redis)
    try:
        web.run_app(
            app,
            host=host,
            port=port,
            handler_cancellation=True,
            print=(lambda line: print(line, file=sys.stderr)) if announce else None,
            access_log=None,
            loop=new_event_loop(),
        )
    except OSError as error:  # lost a race for the address after the check
        raise ListenError(f"cannot listen on {host}:{port}: {error.strerror}") from None


async def _prepare_gc(app) -> None:
    prepare_gc_for_serving()


def new_event_loop():
    """uvloop's loop where it is installed (every platform but Windows), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.new_event_loop()
    return uvloop.new_event_loop()

"""Running the gateway's aiohttp app from the CLI: a busy or invalid address is a clear error,
port 0 is reported, SIGINT/SIGTERM stop it gracefully."""

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


def serve_app(
    app, host: str, port: int, announce: bool = True, on_listening=None, keepalive_s: float = 75.0
) -> None:
    """Serve until SIGINT/SIGTERM; the app's cleanup (nodes, Redis) runs on the way out. Port 0
    takes a free port: the bound address is logged (`{"event": "listening", ...}`) and passed
    to `on_listening(port)`. An idle client connection is closed after `keepalive_s`."""
    ensure_can_listen(host, port)
    app.on_startup.append(_prepare_gc)  # after the app's own startup (nodes, Redis)
    loop = new_event_loop()
    try:
        loop.run_until_complete(_serve(app, host, port, announce, on_listening, keepalive_s))
    finally:
        loop.close()


async def _serve(app, host: str, port: int, announce: bool, on_listening, keepalive_s: float) -> None:
    import asyncio
    import json
    import logging
    import signal

    from aiohttp import web

    from gateway.http.protocol_errors import GatewayRunner

    runner = GatewayRunner(app, handler_cancellation=True, access_log=None, keepalive_timeout=keepalive_s)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as error:  # lost a race for the address after the check
            raise ListenError(f"cannot listen on {host}:{port}: {error.strerror}") from None
        bound = runner.addresses[0][1]
        logging.getLogger("hybridgw.gateway").info(
            json.dumps({"event": "listening", "service": "gateway", "address": f"{host}:{bound}"})
        )
        if announce:
            print(f"======== Running on http://{host}:{bound} ========", file=sys.stderr, flush=True)
        if on_listening is not None:
            on_listening(bound)
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()  # stops accepting, lets running requests finish, then the app's cleanup


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

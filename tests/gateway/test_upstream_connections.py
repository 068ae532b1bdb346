"""One upstream under load whose server closes idle kept-alive connections (a short keep-alive
there, as llama-server's 5 s or uvicorn's): a connection it closed, picked from the pool before
the gateway saw it close, costs a reconnect, never a request. Against a real upstream: another
hybridgw gateway process (with its own real edge node) closing idle connections after 10 ms."""

import asyncio
import time

import aiohttp
import pytest

from formats.tokenizer import GGUFTokenizer
from gateway.backends.upstream import UpstreamBackend
from gateway.config.gateway_config import GatewayConfig, ModelEntry, UpstreamEntry
from gateway.serving import app_keys
from tests.fixtures.chunk_sinks import TokenRecorder
from tests.fixtures.edge_node import node_request
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.gateway_process import GatewayProcess
from tests.fixtures.polling import eventually

pytestmark = pytest.mark.integration
# the upstream's keep-alive: on these two cores, short enough that under load it closes
# connections the gateway is about to reuse (3 rounds of 32 failed every run before the reconnect)
UPSTREAM_KEEPALIVE_S = 0.01
NUM_CLIENTS, NUM_ROUNDS = 32, 3


@pytest.fixture(scope="module")
def closing_peer(model_path, edge_node):
    """A gateway that closes a connection idle for 10 ms; its edge queue holds every client."""
    extra = ("--keepalive-s", str(UPSTREAM_KEEPALIVE_S), "--edge-queue-bound", str(2 * NUM_CLIENTS))
    peer = GatewayProcess(model_path, f"127.0.0.1:{edge_node.port}", extra)
    yield peer
    peer.stop()


def _entry(peer, **fields) -> UpstreamEntry:
    return UpstreamEntry("peer", peer.url, "edge", {"tiny": "tiny"}, **fields)


async def test_a_pooled_connection_the_upstream_closed_is_sent_again_on_a_fresh_one(model_path, closing_peer):
    tokenizer = GGUFTokenizer.from_file(model_path)
    # the pool keeps connections longer than the server does: the case the reconnect covers
    backend = UpstreamBackend(_entry(closing_peer, keepalive_s=60.0), {"tiny": tokenizer})
    await backend.start()
    prompt = tokenizer.encode("Hello world", add_special=False)

    async def generate() -> list[int]:
        request = node_request(prompt, max_tokens=4)
        request.model = "tiny"
        sink = TokenRecorder()
        await backend.run(request, sink, timeout_s=30)
        await sink.wait()
        return sink.token_ids

    try:
        for _ in range(2):
            expected = await generate()  # its connection goes back to the pool
            num_reconnects = backend.num_reconnects
            # the loop held (as a busy gateway's is) past the upstream's keep-alive: the server
            # closes the pooled connection, and the next request takes it before the close is read
            time.sleep(5 * UPSTREAM_KEEPALIVE_S)
            assert await generate() == expected
            # sent again (on a busy machine a fresh connection, idle 10 ms there, may close too)
            assert backend.num_reconnects > num_reconnects
        assert backend.state.healthy
    finally:
        await backend.close()


async def test_every_streamed_request_is_answered_while_the_upstream_closes_idle_connections(
    model_path, closing_peer
):
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)], upstreams=[_entry(closing_peer)]
    )
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:
        await eventually(lambda: gw.runner.app[app_keys.BACKENDS][0].state.healthy, what="the upstream up")
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 8, "stream": True, "temperature": 0}

        async def one() -> tuple[int, str]:
            async with session.post(f"{gw.url}/v1/chat/completions", json=body) as response:
                text = (await response.read()).decode()
                return response.status, text

        statuses = []
        for _ in range(NUM_ROUNDS):
            answers = await asyncio.gather(*(one() for _ in range(NUM_CLIENTS)))
            statuses += [status for status, _ in answers]
            failed = [text[:300] for status, text in answers if status != 200]
            assert not failed, failed
            assert all(text.endswith("data: [DONE]\n\n") for _, text in answers)
            await asyncio.sleep(2 * UPSTREAM_KEEPALIVE_S)  # the pooled connections idle out there
        assert statuses == [200] * NUM_CLIENTS * NUM_ROUNDS

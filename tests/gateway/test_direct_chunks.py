"""Plain chunks handed to a synchronous consumer by the edge node's reader (DirectChunks), the
rest through generate()'s iterator: together every token in order, the last through the iterator;
and the streamed response's events written from that path (DirectSSE)."""

import aiohttp
from aiohttp import web

from gateway import handlers
from gateway.backends.base import DirectChunks
from gateway.direct_sse import DirectSSE
from gateway.pipeline import TextEvent
from shared.proto import inference_pb2 as pb
from tests.fixtures.edge_node import free_port, node_request
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config, greedy_text


async def test_taken_and_iterated_chunks_are_every_token_in_order(edge_node, backend):
    request = node_request([1, 2, 3], max_tokens=12)
    expected = [t.token_id for c in edge_node.stub.Generate(request) for t in c.tokens]
    seen: list[tuple[str, pb.GenerateChunk]] = []
    offers = [0]

    def consume(chunk: pb.GenerateChunk) -> bool:
        offers[0] += 1
        if offers[0] % 3 == 0:
            return False  # as a writer that is not ready: this one and those behind it queue
        seen.append(("direct", chunk))
        return True

    direct = DirectChunks()
    direct.consume = consume
    async for batch in backend.generate(request, 30, None, direct):
        seen += [("iterator", chunk) for chunk in batch]
    assert [t.token_id for _, c in seen for t in c.tokens] == expected
    assert [c.index for _, c in seen] == sorted(c.index for _, c in seen)
    paths = [path for path, _ in seen]
    assert "direct" in paths and "iterator" in paths[:-1]
    assert paths[-1] == "iterator" and seen[-1][1].finish_reason != pb.FINISH_REASON_UNSPECIFIED
    assert all(session.inboxes == {} for session in backend._sessions)


async def test_a_consumer_that_fails_hands_that_chunk_and_the_rest_to_the_iterator(edge_node, backend):
    request = node_request([1, 2, 3], max_tokens=8)
    expected = [t.token_id for c in edge_node.stub.Generate(request) for t in c.tokens]
    taken = []

    def consume(chunk: pb.GenerateChunk) -> bool:
        if taken:
            raise IndexError("token id out of range")  # as a detokenizer rejecting an id
        taken.append(chunk)
        return True

    direct = DirectChunks()
    direct.consume = consume
    iterated = [chunk async for batch in backend.generate(request, 30, None, direct) for chunk in batch]
    assert [t.token_id for c in taken + iterated for t in c.tokens] == expected
    assert len(taken) == 1 and direct.consume is None
    assert not any(session.broken for session in backend._sessions)  # the stream's reader went on
    assert len([c async for c in backend.generate(node_request([4], max_tokens=3), 30)]) >= 1


async def test_without_a_consumer_every_chunk_comes_through_the_iterator(edge_node, backend):
    request = node_request([4, 5], max_tokens=5)
    expected = [t.token_id for c in edge_node.stub.Generate(request) for t in c.tokens]
    direct = DirectChunks()  # consume never set
    tokens = [
        t.token_id
        async for batch in backend.generate(request, 30, None, direct)
        for c in batch
        for t in c.tokens
    ]
    assert tokens == expected


class CountingSSE(DirectSSE):
    """DirectSSE that says it is not ready every other time it is asked, and counts its writes."""

    asked = 0
    written = 0

    def ready(self) -> bool:
        CountingSSE.asked += 1
        return CountingSSE.asked % 2 == 1 and super().ready()

    def write(self, events: list[TextEvent]) -> None:
        CountingSSE.written += 1
        super().write(events)


async def test_a_streamed_response_is_the_same_text_written_directly_or_by_the_task(
    model_path, edge_node, monkeypatch
):
    monkeypatch.setattr(handlers, "DirectSSE", CountingSSE)
    expected = greedy_text(model_path, 12)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        stream = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=12, temperature=0, stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == expected
    assert CountingSSE.written > 0 and CountingSSE.asked > CountingSSE.written  # both paths ran


class PlainFormat:
    """The one ResponseFormat method DirectSSE calls."""

    def events_sse(self, events: list[TextEvent]) -> bytes:
        return b"".join(b"data: %s\n\n" % event.text.encode() for event in events)


async def test_direct_sse_writes_at_once_and_is_not_ready_while_writing_is_paused():
    readiness = []

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        direct = DirectSSE(request, response, PlainFormat())
        readiness.append(direct.ready())
        direct.write([TextEvent(0, "one")])
        request.protocol.pause_writing()  # what the transport does over its high-water mark
        readiness.append(direct.ready())
        request.protocol.resume_writing()
        readiness.append(direct.ready())
        direct.write([TextEvent(0, "two"), TextEvent(0, "three")])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/", stream)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/") as response:
            body = await response.read()
    finally:
        await runner.cleanup()
    assert body == b"data: one\n\ndata: two\n\ndata: three\n\n"
    assert readiness == [True, False, True]

"""Plain chunks handed to a synchronous consumer by the edge node's reader (DirectChunks), the
rest through generate()'s iterator: together every token in order, the last through the iterator;
and the streamed response's events written from that path (DirectSSE), with logprobs, and up to a
stop string, whose chunk the request's task ends the stream with."""

import aiohttp
import pytest
from aiohttp import web

from formats.gguf_reader import GGUFReader
from formats.tokenizer import GGUFTokenizer
from gateway import handlers
from gateway.backends.base import DirectChunks
from gateway.direct_sse import DirectSSE
from gateway.generation import Generation, TextEvent
from gateway.privacy import PrivacyDecision
from gateway.text_stream import TextStream
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


@pytest.fixture
def counting_sse(monkeypatch):
    monkeypatch.setattr(handlers, "DirectSSE", CountingSSE)
    CountingSSE.asked = CountingSSE.written = 0
    return CountingSSE


async def test_a_streamed_response_is_the_same_text_written_directly_or_by_the_task(
    model_path, edge_node, counting_sse
):
    expected = greedy_text(model_path, 12)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        stream = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=12, temperature=0, stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == expected
    assert counting_sse.written > 0 and counting_sse.asked > counting_sse.written  # both paths ran


async def test_logprobs_stream_the_same_tokens_directly_or_by_the_task(model_path, edge_node, counting_sse):
    request = {"model": "tiny", "prompt": "Hello", "max_tokens": 12, "temperature": 0, "logprobs": 2}
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        whole = (await gw.client.completions.create(**request)).choices[0]
        texts, tokens, finishes = [], [], []
        async for chunk in await gw.client.completions.create(**request, stream=True):
            texts.append(chunk.choices[0].text)
            tokens += chunk.choices[0].logprobs.tokens if chunk.choices[0].logprobs else []
            finishes.append(chunk.choices[0].finish_reason)
    assert "".join(texts) == whole.text and tokens == whole.logprobs.tokens
    assert finishes[-1] == whole.finish_reason and finishes[:-1] == [None] * (len(finishes) - 1)
    assert counting_sse.written > 0


class ReadySSE(DirectSSE):
    """DirectSSE that counts its writes (always ready while the connection is)."""

    written = 0

    def write(self, events: list[TextEvent]) -> None:
        ReadySSE.written += 1
        super().write(events)


async def test_a_stop_string_ending_in_a_direct_chunk_ends_the_stream_there(
    model_path, edge_node, monkeypatch
):
    """The stop string lies inside one token's text, after the first events: the text before it
    goes out from the reader, and the request's task ends the stream with that chunk (the usage
    counts the tokens up to it, as without the direct path)."""
    monkeypatch.setattr(handlers, "DirectSSE", ReadySSE)
    request = {"model": "tiny", "prompt": "Hello", "max_tokens": 24, "temperature": 0}
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        whole = (await gw.client.completions.create(**request, logprobs=1)).choices[0]
        pieces = whole.logprobs.tokens
        stopping = next(
            k
            for k in range(3, len(pieces))
            if len(pieces[k]) >= 3 and pieces[k][1:3] not in "".join(pieces[:k]) + pieces[k][:2]
        )
        stop = pieces[stopping][1:3]  # inside that token's text, found nowhere before it
        unstreamed = await gw.client.completions.create(**request, stop=[stop])
        streamed, finishes, usage = "", [], None
        ReadySSE.written = 0
        async for chunk in await gw.client.completions.create(
            **request, stop=[stop], stream=True, stream_options={"include_usage": True}
        ):
            if chunk.choices:
                streamed += chunk.choices[0].text
                finishes.append(chunk.choices[0].finish_reason)
            usage = chunk.usage or usage
    cut = "".join(pieces[:stopping]) + pieces[stopping][:1]
    assert streamed == cut == unstreamed.choices[0].text and [f for f in finishes if f] == ["stop"]
    assert usage.completion_tokens == unstreamed.usage.completion_tokens == stopping + 1
    assert ReadySSE.written >= stopping - 1  # the tokens after the first event, the stopping one's text too


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


def test_the_chunk_in_which_a_stop_string_ends_is_left_to_the_task(model_path):
    tokenizer = GGUFTokenizer.from_metadata(GGUFReader(model_path).metadata)
    ids = tokenizer.encode("the cat sat on the mat, and then the dog", add_special=False)
    assert len(ids) >= 6
    stop = tokenizer.decode(ids[3:5])  # ends in the fifth token's text
    assert stop and stop not in tokenizer.decode(ids[:4])
    generation = Generation("r", "tiny", "edge-a", "edge", "test", 0, PrivacyDecision(False, "public"))
    generation.texts, generation.direct = [TextStream(tokenizer, [stop])], DirectChunks()

    class Collect:
        def __init__(self):
            self.texts = []

        def ready(self) -> bool:
            return True

        def write(self, events: list[TextEvent]) -> None:
            self.texts += [event.text for event in events]

    writer = Collect()
    generation.stream_directly(writer)
    taken = [generation.direct.offer(_chunk(token_id)) for token_id in ids[:5]]
    assert taken == [True, True, True, True, False]  # the fifth: the task counts it and ends the stream
    assert "".join(writer.texts) == tokenizer.decode(ids[:3]) and generation.completion_tokens == 4
    assert generation.texts[0].stopped


def _chunk(token_id: int) -> pb.GenerateChunk:
    chunk = pb.GenerateChunk(request_id="r-0")
    chunk.tokens.add(token_id=token_id)
    return chunk

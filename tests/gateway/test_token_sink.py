"""The token path: a ChoiceSink turns a choice's chunks into text events (stop strings, counts,
logprobs, first token, failures); the StreamSink writes each event at once while the connection
takes data and otherwise queues it, in order, for its drain task (compressed responses always);
the edge session's reader feeds the sinks; and through the gateway every path gives the same
text, up to a stop string, with compression on too."""

import asyncio
import gzip
import json

import aiohttp
import pytest
from aiohttp import web

from formats.gguf_reader import GGUFReader
from formats.tokenizer import GGUFTokenizer
from gateway.backends.base import BackendError
from gateway.config.gateway_config import GatewayConfig
from gateway.output.text_stream import TextStream
from gateway.output.token_sink import ChoiceSink, TextEvent
from gateway.serving.collect_writer import CollectingSink
from gateway.serving.stream_writer import StreamSink
from shared.proto import inference_pb2 as pb
from tests.fixtures.edge_node import node_request
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config, greedy_text


def _chunk(*token_ids: int, finish: int = pb.FINISH_REASON_UNSPECIFIED, cached: int = 0) -> pb.GenerateChunk:
    chunk = pb.GenerateChunk(request_id="r-0", finish_reason=finish)
    for token_id in token_ids:
        chunk.tokens.add(token_id=token_id, logprob=-0.5)
    chunk.usage.cached_tokens = cached
    return chunk


@pytest.fixture(scope="module")
def tokenizer(model_path):
    return GGUFTokenizer.from_metadata(GGUFReader(model_path).metadata)


async def test_a_choice_sink_emits_each_chunks_text_and_finishes_with_the_node(tokenizer):
    ids = tokenizer.encode("the cat sat on the mat", add_special=False)
    collected, counts = CollectingSink(1), []
    sink = ChoiceSink(0, TextStream(tokenizer, []), collected, True, counts.append)
    sink.put(_chunk(ids[0]))
    await sink.first_token()
    sink.put(_chunk(*ids[1:-1]))
    sink.put(_chunk(ids[-1], finish=pb.FINISH_REASON_LENGTH, cached=7))
    await sink.wait()
    events = collected.events[0]
    assert "".join(e.text for e in events) == tokenizer.decode(ids)
    assert [e.finish_reason for e in events] == [None, None, "length"]
    assert [len(e.logprobs) for e in events] == [1, len(ids) - 2, 1]
    assert (sink.completion_tokens, sink.cached_tokens, counts) == (len(ids), 7, [1, len(ids) - 2, 1])
    sink.put(_chunk(ids[0]))  # after the end: ignored
    assert len(collected.events[0]) == 3 and sink.completion_tokens == len(ids)


async def test_a_stop_string_inside_a_chunk_ends_the_choice_there(tokenizer):
    ids = tokenizer.encode("the cat sat on the mat, and then the dog", add_special=False)
    stop = tokenizer.decode(ids[3:5])  # ends in the fifth token's text
    assert stop and stop not in tokenizer.decode(ids[:4])
    collected = CollectingSink(1)
    sink = ChoiceSink(0, TextStream(tokenizer, [stop]), collected)
    sink.put(_chunk(*ids[:2]))
    sink.put(_chunk(*ids[2:6]))  # the stop string ends inside this chunk, in its third token
    # usage counts the tokens up to the one that completed the stop string (vLLM's), not the
    # chunk's last: a node that batches tokens must report what one that streams each reports
    assert sink.finished and sink.finish_reason == "stop" and sink.completion_tokens == 5
    assert sink.token_ids == ids[:5]
    assert "".join(e.text for e in collected.events[0]) == tokenizer.decode(ids[:3])
    assert collected.events[0][-1].finish_reason == "stop"


async def test_a_failure_before_the_first_token_is_raised_to_both_waiters(tokenizer):
    sink = ChoiceSink(0, TextStream(tokenizer, []), CollectingSink(1))
    sink.fail(BackendError("connection refused", 502))
    with pytest.raises(BackendError, match="refused"):
        await sink.first_token()
    with pytest.raises(BackendError, match="refused"):
        await sink.wait()
    assert sink.finished


class PlainFormat:
    """The ResponseFormat methods an StreamSink calls: each event's text as one `data:` line."""

    stream_opening = b"data: open\n\n"

    def serialize_ahead(self) -> None:
        pass

    def stream_event(self, event: TextEvent) -> bytes:
        return b"data: %s\n\n" % event.text.encode()

    def stream_closing(self, generation) -> bytes:
        return b'data: {"end":true}\n\ndata: [DONE]\n\n'


async def _serve_sse(handler, headers: dict[str, str] | None = None) -> bytes:
    """One GET against an in-process app on a port the OS picks; returns the decoded body."""
    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/", headers=headers) as response,
        ):
            return await response.read()
    finally:
        await runner.cleanup()


async def test_the_sse_sink_writes_at_once_and_queues_in_order_while_the_client_lags():
    written = {}

    async def handler(request: web.Request) -> web.StreamResponse:
        output = StreamSink(request, PlainFormat())
        output.emit(TextEvent(0, "before"))  # before start(): kept, sent after the opening
        await output.start({})
        transport = request.transport
        output.emit(TextEvent(0, "one"))  # the connection takes data: written in this call
        written["at_once"] = output._pending == []  # (the drain task has not run since)
        transport.set_write_buffer_limits(high=0)  # as a client reading slower than we write
        output._high_water = 0
        for word in ("two", "three", "four"):
            output.emit(TextEvent(0, word))
        written["queued"] = len(output._pending)
        await output.finish(None)
        await output.close()
        return output.response

    body = await _serve_sse(handler)
    assert body == (
        b"data: open\n\ndata: before\n\ndata: one\n\ndata: two\n\ndata: three\n\ndata: four\n\n"
        b'data: {"end":true}\n\ndata: [DONE]\n\n'
    )
    assert written["at_once"] and 1 <= written["queued"] <= 3


async def test_a_compressed_stream_carries_every_byte_of_large_events():
    """aiohttp compresses a write over 4 KiB in an executor (the write waits): every event still
    arrives, in order."""
    words = [f"{index:04d}" * 1500 for index in range(6)]  # 6 KB each

    async def handler(request: web.Request) -> web.StreamResponse:
        output = StreamSink(request, PlainFormat(), compress=True)
        await output.start({})
        for word in words:
            output.emit(TextEvent(0, word))
            await asyncio.sleep(0)
        await output.finish(None)
        await output.close()
        assert output.response.compression
        return output.response

    body = await _serve_sse(handler, {"Accept-Encoding": "gzip"})
    expected = b"data: open\n\n" + b"".join(b"data: %s\n\n" % w.encode() for w in words)
    expected += b'data: {"end":true}\n\ndata: [DONE]\n\n'
    assert body == expected


async def test_the_edge_reader_feeds_the_sink_every_token_in_order(edge_node, backend, tokenizer):
    request = node_request([1, 2, 3], max_tokens=12)
    expected = [t.token_id for c in edge_node.stub.Generate(request) for t in c.tokens]
    collected = CollectingSink(1)
    sink = ChoiceSink(0, TextStream(tokenizer, []), collected, keep_logprobs=True)
    await backend.run(request, sink, 30)
    assert [t.token_id for e in collected.events[0] for t in e.logprobs] == expected
    assert sink.finish_reason == "length" and all(s.sinks == {} for s in backend._sessions)


async def test_a_sink_that_cannot_take_a_chunk_fails_alone_and_the_reader_goes_on(backend, tokenizer):
    class Refusing(CollectingSink):
        def emit(self, event: TextEvent) -> None:
            raise IndexError("token id out of range")  # as a detokenizer rejecting an id

    sink = ChoiceSink(0, TextStream(tokenizer, []), Refusing(1))
    with pytest.raises(BackendError, match="could not be read"):
        await backend.run(node_request([1, 2, 3], max_tokens=8), sink, 30)
    assert not any(session.broken for session in backend._sessions)
    good = ChoiceSink(0, TextStream(tokenizer, []), CollectingSink(1))
    await backend.run(node_request([4], max_tokens=3), good, 30)
    assert good.completion_tokens == 3


async def test_streamed_and_whole_responses_are_the_same_text_and_logprobs(model_path, edge_node):
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


async def test_a_stop_string_ends_the_stream_and_its_usage_there(model_path, edge_node):
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


async def test_with_compression_on_the_stream_is_gzip_and_the_same_text(model_path, edge_node):
    config: GatewayConfig = edge_config(model_path, edge_node)
    config.compress_responses = True
    expected = greedy_text(model_path, 16)
    body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 16, "temperature": 0, "stream": True}
    body |= {"logprobs": True, "top_logprobs": 5}  # large events
    async with Gateway(config) as gw, aiohttp.ClientSession(auto_decompress=False) as session:
        headers = {"Accept-Encoding": "gzip"}
        async with session.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            raw = gzip.decompress(await response.read())
    lines = [line[6:] for line in raw.split(b"\n\n") if line.startswith(b"data: ")]
    assert lines[-1] == b"[DONE]"
    text = "".join(
        (json.loads(line)["choices"] or [{}])[0].get("delta", {}).get("content") or "" for line in lines[:-1]
    )
    assert text == expected
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:  # an answer at once too
        whole = {**body, "stream": False}
        async with session.post(f"{gw.url}/v1/chat/completions", json=whole, headers=headers) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert (await response.json())["choices"][0]["message"]["content"] == expected


async def test_a_calls_arguments_stream_one_piece_per_token_however_the_chunks_group_them(tokenizer):
    """A loaded gateway reads several tokens per chunk: the arguments still go out as they were
    generated, a piece per token, and the pieces join to the call."""
    from gateway.tools.tool_call_formats import HERMES
    from gateway.tools.tool_call_parser import ToolCallParser

    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}\n</tool_call>'
    ids = tokenizer.encode(call, add_special=False)
    events: dict[str, list] = {}
    for grouping in ("per token", "one chunk"):
        collected = CollectingSink(1)
        tools = ToolCallParser(HERMES, frozenset({"get_weather"}), stream_arguments=True)
        sink = ChoiceSink(0, TextStream(tokenizer, []), collected, tools=tools)
        chunks = [[token] for token in ids] if grouping == "per token" else [ids]
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            sink.put(_chunk(*chunk, finish=pb.FINISH_REASON_STOP if last else pb.FINISH_REASON_UNSPECIFIED))
        await sink.wait()
        events[grouping] = collected.events[0]
    for grouping, emitted in events.items():
        pieces = [piece for event in emitted for piece in event.call_pieces]
        (whole,) = [c for event in emitted for c in event.tool_calls]
        assert "".join(p.arguments for p in pieces) == whole.arguments == '{"city": "Oslo", "days": 3}'
        assert pieces[0].first and emitted[-1].finish_reason == "tool_calls", grouping
        assert "".join(e.text for e in emitted) == "", grouping
    by_token = [p.arguments for e in events["per token"] for p in e.call_pieces]
    assert [p.arguments for e in events["one chunk"] for p in e.call_pieces] == by_token
    assert len(by_token) > 2

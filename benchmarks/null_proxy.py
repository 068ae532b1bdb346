"""Benchmark reference: the cheapest HTTP-to-gRPC hop, a proxy that does no gateway work at all.

It takes a POST, sends a fixed request over one of the node's Session streams (the gateway's own
client, gateway/backends/edge_session.py, as many streams as the gateway keeps, a request on one
not writing) and writes each reply as a bare SSE event: no JSON parsing, no
templating or tokenization, no privacy check, routing, detokenization or OpenAI chunks. On the
same stack as the gateway (aiohttp on uvloop, grpc.aio), its added latency is what any such hop
costs on this machine; the gateway's own work is what it adds beyond it.
Run: python benchmarks/null_proxy.py PORT NODE_ADDRESS TOKENS [openai]
With `openai`, each token is a minimal OpenAI chat chunk instead (what an OpenAI client such as
LiteLLM's proxy reads: benchmarks/litellm_proxy.py).
"""

import itertools
import sys

import grpc
from aiohttp import web
from queue_sink import QueueSink  # beside this script

from gateway.backends.edge import SESSIONS_PER_NODE
from gateway.backends.edge_session import SessionStream
from hybridgw.serving import new_event_loop
from hybridgw.serving_gc import prepare_gc_for_serving
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc

SESSIONS = web.AppKey("sessions", list[SessionStream])


OPENAI_CHUNK = (
    b'data: {"id":"n","object":"chat.completion.chunk","created":0,"model":"bench",'
    b'"choices":[{"index":0,"delta":{"content":"t%d"},"finish_reason":null}]}\n\n'
)
OPENAI_END = (
    b'data: {"id":"n","object":"chat.completion.chunk","created":0,"model":"bench",'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
)


def create_app(node_address: str, tokens: int, openai: bool = False) -> web.Application:
    app = web.Application()
    sampling = pb.SamplingParams(max_tokens=tokens)
    request_ids = itertools.count()

    async def open_session(app: web.Application):
        channel = grpc.aio.insecure_channel(node_address)
        stub = pb_grpc.InferenceStub(channel)
        app[SESSIONS] = [SessionStream(stub, "node") for _ in range(SESSIONS_PER_NODE)]
        prepare_gc_for_serving()  # as the gateway's process does: the same stack, set up alike
        yield
        for session in app[SESSIONS]:
            session.close()
        await channel.close()

    async def proxy(request: web.Request) -> web.StreamResponse:
        await request.read()
        node_request = pb.GenerateRequest(
            request_id=str(next(request_ids)), prompt_token_ids=[1, 2, 3], sampling=sampling
        )
        sessions = request.app[SESSIONS]
        session = next((s for s in sessions if not s.writing), sessions[0])
        sink = QueueSink()
        await session.send(node_request, sink)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        while True:
            chunks = await sink.take_all()
            event = OPENAI_CHUNK if openai else b'data: {"token": %d}\n\n'
            events = b"".join(event % t.token_id for c in chunks for t in c.tokens)
            if chunks[-1].finish_reason:
                await response.write_eof(events + (OPENAI_END if openai else b"") + b"data: [DONE]\n\n")
                return response
            await response.write(events)

    app.cleanup_ctx.append(open_session)
    app.router.add_post("/v1/chat/completions", proxy)
    return app


if __name__ == "__main__":
    port, node_address, tokens = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    openai = sys.argv[4:] == ["openai"]
    web.run_app(
        create_app(node_address, tokens, openai),
        host="127.0.0.1",
        port=port,
        print=None,
        loop=new_event_loop(),
    )

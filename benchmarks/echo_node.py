"""Benchmark double: an `Inference` gRPC node that steps like an engine, with no model behind it.

It exists only to measure what the gateway adds (benchmarks/gateway_overhead.py); a real node's
compute would drown the overhead being measured. A request's first token is ready on arrival
(prefill takes no time here); then every STEP_MS one step gives each running request its next
token, as continuous batching does. Generate and Session are served from the same steps, so the
two protocols see the same node. Run: python benchmarks/echo_node.py PORT TOKENS [STEP_MS]
"""

import asyncio
import sys

import grpc

from hybridgw.serving_gc import prepare_gc_for_serving
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from shared.session_server import serve_session


class SteppingEcho(pb_grpc.InferenceServicer):
    def __init__(self, num_tokens: int, step_s: float):
        self.num_tokens = num_tokens
        self.step_s = step_s
        self.sessions = set()
        self._running: dict[str, tuple[pb.GenerateRequest, int, asyncio.Queue]] = {}
        self._work = asyncio.Event()

    async def Generate(self, request, context):
        async for chunk in self._chunks(request):
            yield chunk

    async def Session(self, request_iterator, context):
        async for batch in serve_session(request_iterator, self._chunks, self.sessions):
            yield batch

    async def Stats(self, request, context):
        return pb.NodeStats(
            node_id="echo",
            kind="edge",
            max_running=4096,
            num_running=len(self._running),
            prefill_tokens_per_s=1e6,
            decode_tokens_per_s=1 / self.step_s,
        )

    async def step_forever(self) -> None:
        while True:
            if not self._running:
                self._work.clear()
                await self._work.wait()
            await asyncio.sleep(self.step_s)
            for request, index, queue in list(self._running.values()):
                self._emit(request, index, queue)

    async def _chunks(self, request):
        queue: asyncio.Queue = asyncio.Queue()
        self._emit(request, 0, queue)
        self._work.set()
        try:
            while True:
                chunk = await queue.get()
                yield chunk
                if chunk.finish_reason:
                    return
        finally:
            self._running.pop(request.request_id, None)

    def _emit(self, request, index: int, queue: asyncio.Queue) -> None:
        count = min(self.num_tokens, request.sampling.max_tokens or self.num_tokens)
        chunk = pb.GenerateChunk(
            request_id=request.request_id, index=index, tokens=[pb.GeneratedToken(token_id=100 + index % 50)]
        )
        if index == count - 1:
            chunk.finish_reason = pb.FINISH_REASON_LENGTH
            chunk.usage.prompt_tokens = len(request.prompt_token_ids)
            chunk.usage.completion_tokens = count
            self._running.pop(request.request_id, None)
        else:
            self._running[request.request_id] = (request, index + 1, queue)
        queue.put_nowait(chunk)


async def main(port: int, num_tokens: int, step_ms: float) -> None:
    server = grpc.aio.server()
    servicer = SteppingEcho(num_tokens, step_ms / 1000)
    pb_grpc.add_InferenceServicer_to_server(servicer, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    stepping = asyncio.create_task(servicer.step_forever())
    prepare_gc_for_serving()  # as the real nodes' processes do
    print("ready", flush=True)
    try:
        await server.wait_for_termination()
    finally:
        stepping.cancel()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 5.0))

"""Benchmark double: an `Inference` gRPC node that streams fixed tokens at once, no model behind it.

It exists only to measure what the gateway adds (benchmarks/gateway_overhead.py); a real node's
compute would drown the overhead being measured. Run: python benchmarks/echo_node.py PORT TOKENS
"""

import asyncio
import sys

import grpc

from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from shared.session_server import serve_session


class EchoInference(pb_grpc.InferenceServicer):
    def __init__(self, num_tokens: int):
        self.num_tokens = num_tokens
        self.sessions = set()

    async def Generate(self, request, context):
        async for chunk in self._chunks(request):
            yield chunk

    async def Session(self, request_iterator, context):
        async for batch in serve_session(request_iterator, self._chunks, self.sessions):
            yield batch

    async def _chunks(self, request):
        count = min(self.num_tokens, request.sampling.max_tokens or self.num_tokens)
        for index in range(count):
            chunk = pb.GenerateChunk(
                request_id=request.request_id,
                index=index,
                tokens=[pb.GeneratedToken(token_id=100 + index % 50)],
            )
            if index == count - 1:
                chunk.finish_reason = pb.FINISH_REASON_LENGTH
                chunk.usage.prompt_tokens = len(request.prompt_token_ids)
                chunk.usage.completion_tokens = count
            yield chunk

    async def Stats(self, request, context):
        return pb.NodeStats(
            node_id="echo", kind="edge", max_running=1024, prefill_tokens_per_s=1e6, decode_tokens_per_s=1e6
        )


async def main(port: int, num_tokens: int) -> None:
    server = grpc.aio.server()
    pb_grpc.add_InferenceServicer_to_server(EchoInference(num_tokens), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))

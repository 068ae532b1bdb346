"""Benchmark double of the gateway's ChunkSink (gateway/backends/base.py) for the reference
clients and the null proxy: a Session stream's reader puts chunks in, and the one task that
serves the request takes every chunk ready at once (what the gateway did before its sinks)."""

import asyncio

from shared.proto import inference_pb2 as pb


class QueueSink:
    def __init__(self):
        self._chunks: list[pb.GenerateChunk] = []
        self._ready = asyncio.Event()
        self._done = asyncio.get_running_loop().create_future()

    @property
    def finished(self) -> bool:
        return self._done.done()

    def put(self, chunk: pb.GenerateChunk) -> None:
        self._chunks.append(chunk)
        self._ready.set()
        if chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED:
            self._done.set_result(None)

    def fail(self, error: BaseException) -> None:
        if not self._done.done():
            self._done.set_exception(error)
        self._ready.set()

    async def take_all(self) -> list[pb.GenerateChunk]:
        """Every chunk ready (at least one); raises the failure if there is none."""
        while not self._chunks:
            if self._done.done():
                self._done.result()
            await self._ready.wait()
            self._ready.clear()
        chunks, self._chunks = self._chunks, []
        return chunks

    async def wait(self) -> None:
        await asyncio.shield(self._done)

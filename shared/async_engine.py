"""Runs an engine (edge or cloud) in its own thread and streams each request's tokens to asyncio.

The engine provides add_request(request_id, prompt_ids, params, priority, cache_salt),
abort(request_id), has_work(),
step() -> list[StepOutput] and close().

Adding and aborting requests are queued commands that the engine thread applies before its next
step, so a caller never waits for a running step, and an aborted request's slot is free for the
very next step. `drain()` stops admitting new requests and waits for the running ones.
"""

import asyncio
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from shared.sampling import SamplingParams
from shared.step_output import StepOutput

logger = logging.getLogger("hybridgw.engine")


class EngineDrainingError(RuntimeError):
    """The node is shutting down and takes no new requests."""


class AsyncEngine:
    def __init__(self, engine: Any):
        self.engine = engine
        self._commands: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stopped = False
        self.draining = False
        self._streams: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._thread = threading.Thread(target=self._run, name="engine-loop", daemon=True)
        self._thread.start()

    async def generate_batches(
        self,
        request_id: str,
        prompt_ids: list[int],
        params: SamplingParams,
        priority: int = 0,
        cache_salt: str = "",
    ) -> AsyncIterator[list[StepOutput]]:
        """Yields the request's tokens in order, each time all that are ready: one token per step
        while the consumer keeps up, several at once when it falls behind (vLLM's output
        collector does the same), so a slow stream costs fewer messages, never lost tokens.
        `priority`: lower runs first when requests wait for room (vLLM's convention);
        `cache_salt`: only requests with the same salt share cached prompt tokens."""
        if self.draining:
            raise EngineDrainingError("the node is draining")
        loop = asyncio.get_running_loop()
        stream: asyncio.Queue = asyncio.Queue()
        accepted: asyncio.Future = loop.create_future()

        def add() -> None:
            try:
                self.engine.add_request(request_id, prompt_ids, params, priority, cache_salt)
                self._streams[request_id] = (loop, stream)
                loop.call_soon_threadsafe(_resolve, accepted, None)
            except Exception as exc:  # reported to the caller, never kills the engine thread
                loop.call_soon_threadsafe(_resolve, accepted, exc)

        self._submit(add)
        error = await accepted
        if error is not None:
            raise error
        finished = False
        try:
            while not finished:
                ready = [await stream.get()]
                while not stream.empty():
                    ready.append(stream.get_nowait())
                error = next((item for item in ready if isinstance(item, Exception)), None)
                outputs = ready if error is None else ready[: ready.index(error)]
                finished = error is not None or outputs[-1].finish_reason is not None
                if outputs:
                    yield outputs
                if error is not None:
                    raise error
        finally:
            if not finished:
                self._submit(lambda: self._abort(request_id))

    async def drain(self) -> None:
        self.draining = True
        while self._streams or self.engine.has_work():
            await asyncio.sleep(0.05)

    def close(self) -> None:
        self._stopped = True
        self._wake.set()
        self._thread.join(timeout=5)
        self.engine.close()

    def _submit(self, command: Callable[[], None]) -> None:
        self._commands.put(command)
        self._wake.set()

    def _abort(self, request_id: str) -> None:
        self.engine.abort(request_id)
        self._streams.pop(request_id, None)

    def _run(self) -> None:
        while not self._stopped:
            while not self._commands.empty():
                self._commands.get()()
            if not self.engine.has_work():
                self._wake.wait(timeout=0.5)
                self._wake.clear()
                continue
            try:
                outputs = self.engine.step()
            except Exception as exc:  # a failed step fails its requests, not the node
                logger.exception("engine step failed")
                self._fail_all(exc)
                continue
            for output in outputs:
                target = self._streams.get(output.request_id)
                if target is None:
                    continue
                loop, stream = target
                if output.finish_reason is not None:
                    self._streams.pop(output.request_id, None)
                loop.call_soon_threadsafe(stream.put_nowait, output)

    def _fail_all(self, error: Exception) -> None:
        for request_id, (loop, stream) in list(self._streams.items()):
            self.engine.abort(request_id)
            loop.call_soon_threadsafe(stream.put_nowait, error)
        self._streams.clear()


def _resolve(future: asyncio.Future, error: BaseException | None) -> None:
    if not future.done():
        future.set_result(error)

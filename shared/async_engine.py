"""Runs an Engine (shared/engine.py; edge or cloud) in its own thread and streams each request's
tokens to asyncio.

Adding and aborting requests are queued commands that the engine thread applies before its next
step, so a caller never waits for a running step, and an aborted request's slot is free for the
very next step. `stats` is the engine's latest immutable NodeStats snapshot, replaced by the
engine thread after every step and every command: readers on any thread never touch the engine's
own structures. `drain()` stops admitting new requests and waits for the running ones.

`prepare` (the engine's warmup) runs on the engine thread too, before anything else: numba's
and torch's OpenMP teams belong to the thread that launches them, and a warmup on the main thread
left a second team idle beside the one the steps use. With more OpenMP threads than cores libgomp
sleeps where it would spin: the edge's decode steps ran 7.1 ms instead of 4.7 on two cores.
"""

import asyncio
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from shared.engine import Engine, EngineRequest, NodeStats, StepOutput

T = TypeVar("T")

logger = logging.getLogger("hybridgw.engine")


class EngineDrainingError(RuntimeError):
    """The node is shutting down and takes no new requests."""


class AsyncEngine:
    def __init__(self, engine: Engine, prepare: Callable[[], object] | None = None):
        self.engine = engine
        self.stats: NodeStats = engine.stats()  # before the thread starts: nothing steps yet
        self._commands: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stopped = False
        self.draining = False
        self._streams: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._thread = threading.Thread(target=self._run, name="engine-loop", daemon=True)
        self._thread.start()
        if prepare is not None:
            self._prepare(prepare)

    def _prepare(self, prepare: Callable[[], object]) -> None:
        """Runs `prepare` on the engine thread and waits for it; its exception is raised here."""
        done, failures = threading.Event(), []

        def run() -> None:
            try:
                prepare()
            except Exception as exc:  # raised in the constructor's thread
                failures.append(exc)
            finally:
                done.set()

        self._submit(run)
        done.wait()
        if failures:
            self.close()
            raise failures[0]
        self.stats = self.engine.stats()

    async def generate_batches(self, request: EngineRequest) -> AsyncIterator[list[StepOutput]]:
        """Yields the request's tokens in order, each time all that are ready: one token per step
        while the consumer keeps up, several at once when it falls behind (vLLM's output
        collector does the same), so a slow stream costs fewer messages, never lost tokens."""
        if self.draining:
            raise EngineDrainingError("the node is draining")
        loop = asyncio.get_running_loop()
        stream: asyncio.Queue = asyncio.Queue()
        accepted: asyncio.Future = loop.create_future()

        request_id = request.request_id

        def add() -> None:
            try:
                self.engine.add(request)
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

    async def call(self, work: Callable[[], T]) -> T:
        """`work` run on the engine thread between steps (what may not run beside a step, such
        as the edge's embeddings); its exception is raised here."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()

        def run() -> None:
            try:
                result = work()
            except Exception as exc:  # reported to the caller, never kills the engine thread
                loop.call_soon_threadsafe(_settle, done, None, exc)
            else:
                loop.call_soon_threadsafe(_settle, done, result, None)

        self._submit(run)
        return await done

    async def drain(self) -> None:
        self.draining = True
        while self._streams or self.stats.num_running or self.stats.num_waiting:
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
            if not self._commands.empty():
                while not self._commands.empty():
                    self._commands.get()()
                self.stats = self.engine.stats()
            if not self.engine.has_work():
                self._wake.wait(timeout=0.5)
                self._wake.clear()
                self.stats = self.engine.stats()  # idle: what changed beside the steps (kernels loaded)
                continue
            try:
                result = self.engine.step()
            except Exception as exc:  # a failed step fails its requests, not the node
                logger.exception("engine step failed")
                self._fail_all(exc)
                self.stats = self.engine.stats()
                continue
            self.stats = result.stats
            self._deliver(result.outputs)

    def _deliver(self, outputs: tuple[StepOutput, ...]) -> None:
        for output in outputs:
            target = self._streams.get(output.request_id)
            if target is None:
                continue
            if output.finish_reason is not None:
                self._streams.pop(output.request_id, None)
            self._send(output.request_id, target, output)

    def _fail_all(self, error: Exception) -> None:
        for request_id, target in list(self._streams.items()):
            self.engine.abort(request_id)
            self._send(request_id, target, error)
        self._streams.clear()

    def _send(self, request_id: str, target: tuple[asyncio.AbstractEventLoop, asyncio.Queue], item) -> None:
        """To the request's stream on its loop; a loop that closed (its server stopped while the
        request ran) has no reader left: the request is aborted."""
        loop, stream = target
        try:
            loop.call_soon_threadsafe(stream.put_nowait, item)
        except RuntimeError:  # the loop is closed
            self.engine.abort(request_id)
            self._streams.pop(request_id, None)


def _resolve(future: asyncio.Future, error: BaseException | None) -> None:
    if not future.done():
        future.set_result(error)


def _settle(future: asyncio.Future, result, error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)

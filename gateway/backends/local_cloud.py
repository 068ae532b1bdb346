"""The embedded default for the cloud pool: the cloud engine in the gateway's own process, called
directly instead of through the Redis queue (`hybridgw up` without --redis). Same engine, same
chunks; only the transport differs.

Under `hybridgw up` the engine loads (and, on a first start, compiles its kernels) after the edge
node is up, while the gateway already serves: the backend is created with the load's future and
joins the pool, healthy, when it completes (`starting` on the status page meanwhile). Given how
long a load is expected to take (`expected_load_s`), the node says when it should be ready
(NodeState.ready_at): the router counts its arrival (gateway/routing/filters/arriving.py), and a
request it sends here meanwhile waits for the engine."""

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import time
from collections.abc import Callable

from gateway.backends.base import BackendError, ChunkSink, apply_report, start_polling
from gateway.backends.client_request import ClientRequest
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from shared.async_engine import AsyncEngine
from shared.engine import InvalidRequestError
from shared.proto import inference_pb2 as pb
from shared.proto_convert import (
    chunk_from_outputs,
    engine_request_from_proto,
    sampling_from_proto,
    stats_to_proto,
)
from shared.sampling import InvalidSamplingParams

logger = logging.getLogger("hybridgw.gateway")


class LocalCloudBackend:
    def __init__(
        self,
        engine: AsyncEngine | concurrent.futures.Future,
        models: frozenset[str],
        queue_bound: int = 256,
        expected_load_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        """`engine`: the engine, or the future of one still loading (routed to once loaded, or
        before, once `expected_load_s` says it is the soonest: None, not before)."""
        loading = isinstance(engine, concurrent.futures.Future)
        self.expected_load_s, self.clock = expected_load_s, clock
        self._settled = asyncio.Event()  # the load ended (well or not), or its arrival is unknown
        self._loop: asyncio.AbstractEventLoop | None = None
        self._is_compiling = False  # set from the loading thread, maybe before start()
        self.engine: AsyncEngine | None = None if loading else engine
        self.loading = engine if loading else None
        self.state = NodeState("cloud-local", NodeKind.CLOUD, models, queue_bound=queue_bound)
        self.state.healthy, self.state.starting = not loading, loading
        self.state.rtt_s = 0.0
        self.state.shares_prefix_blocks = True  # one engine, one prefix cache
        self.state.on_prem = True  # this machine's cores, as the edge's: no cheaper tier to prefer
        self._poller: asyncio.Task | None = None

    async def start(self) -> None:
        if self.loading is None:
            await self.poll_once()
            self._poller = start_polling(self.poll_once)
        else:  # the app starts once the edges are up, when the engine's load begins
            self._loop = asyncio.get_running_loop()  # before reading _is_compiling (compiling())
            if self.expected_load_s is not None and not self._is_compiling:
                self.state.ready_at = self.clock() + self.expected_load_s
            self._poller = asyncio.create_task(self._join_when_loaded(self.loading))

    async def _join_when_loaded(self, loading: concurrent.futures.Future) -> None:
        """Healthy once the engine loaded; a load that failed leaves the node down, logged."""
        try:
            self.engine = await asyncio.wrap_future(loading)
        except Exception as error:  # any load failure: the node stays out of the pool
            self.state.starting, self.state.ready_at = False, None
            self._settled.set()
            failed = {"event": "node_failed_to_start", "node": self.state.node_id, "error": repr(error)}
            logger.error(json.dumps(failed))
            return
        await self.poll_once()
        self.state.starting, self.state.healthy, self.state.ready_at = False, True, None
        self._settled.set()
        logger.info(json.dumps({"event": "node_joined", "node": self.state.node_id}))
        await start_polling(self.poll_once)

    def compiling(self) -> None:
        """From any thread: the load compiles kernels (a first start, minutes), so it outlasts
        `expected_load_s`: the node's arrival is unknown from now on, and not counted."""
        self._is_compiling = True  # before reading _loop: start() or this sees the other
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._arrival_unknown)

    def _arrival_unknown(self) -> None:
        """Not counted on any more; the requests waiting here go elsewhere (_until_loaded)."""
        self.state.ready_at = None
        self._settled.set()

    async def close(self) -> None:
        """Stops polling (or waiting for the load); the engine's owner closes the engine."""
        if self._poller:
            self._poller.cancel()

    async def poll_once(self) -> None:
        """As any node's report: the live count of this gateway's requests is its own (NodeLoad)."""
        apply_report(self.state, stats_to_proto(self.engine.stats))

    async def run(
        self,
        request: pb.GenerateRequest,
        sink: ChunkSink,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        client: ClientRequest | None = None,
    ) -> None:
        try:
            params = sampling_from_proto(request.sampling)
        except InvalidSamplingParams as error:
            raise BackendError(str(error), 400, retryable=False) from None
        started = time.monotonic()
        if self.engine is None:
            await self._until_loaded(timeout_s)
        engine_request = engine_request_from_proto(request, params, request.request_id)
        try:  # leaving the loop early closes the stream, which aborts the request in the engine
            async with contextlib.aclosing(self.engine.generate_batches(engine_request)) as batches:
                async for outputs in batches:
                    if time.monotonic() - started > timeout_s:
                        raise BackendError("the cloud engine timed out", 504, retryable=False)
                    sink.put(chunk_from_outputs(request.request_id, outputs))
                    if sink.finished:
                        return
        except InvalidRequestError as error:
            raise BackendError(str(error), 400, retryable=False) from None

    async def _until_loaded(self, timeout_s: float) -> None:
        """A request routed here while the engine loads (its arrival was predicted soonest) waits
        for it. A load that fails fails the request over and counts against the node; one whose
        arrival is no longer known (it compiles) or that outlasts the request's time fails it
        over without: the node is late, not failing."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout_s)
        if self.engine is None:
            failed = not self.state.starting
            raise BackendError("the cloud engine has not loaded", 503, node_failed=failed)

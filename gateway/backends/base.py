"""The interface the gateway's pipeline uses for any node."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from gateway.backends.client_request import ClientRequest
from gateway.routing.node_state import NodeState
from shared.proto import inference_pb2 as pb


class BackendError(Exception):
    """The node failed (unreachable, error status, timeout). `retryable` before the first token;
    `node_failed` False when only this request was late there while the node kept working (it is
    tried elsewhere, but the node is not cooled down); `code`: the client's error code."""

    def __init__(
        self,
        message: str,
        status: int = 502,
        retryable: bool = True,
        node_failed: bool = True,
        code: str | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code  # the error code the client sees (None: none)
        self.retryable = retryable
        self.node_failed = node_failed


class ChunkSink(Protocol):
    """Where a backend puts a request's chunks, synchronously, as they arrive, in order
    (gateway/output/token_sink.py: ChoiceSink)."""

    @property
    def finished(self) -> bool:
        """The request ended (its last chunk, a stop string, or a failure): stop reading."""
        ...

    def put(self, chunk: pb.GenerateChunk) -> None: ...

    def fail(self, error: BaseException) -> None: ...

    async def wait(self) -> None:
        """Until the request ended; raises its failure."""
        ...


class Backend(Protocol):
    state: NodeState

    async def run(
        self,
        request: pb.GenerateRequest,
        sink: ChunkSink,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        client: ClientRequest | None = None,
    ) -> None:
        """Sends the request and puts every chunk of its reply into `sink` until it is finished;
        raises BackendError (before the first chunk: `retryable` says whether another node may
        take it). Cancelled, or returning before the node's last chunk (the sink stopped at a
        stop string), it cancels the request on the node. `client`: the client's own request,
        for an upstream that takes it instead of the token-id prompt (gateway/backends/client_request.py)."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


POLL_INTERVAL_S = 0.5


def apply_report(state: NodeState, stats) -> None:
    """A node's own report (NodeStats, or a worker heartbeat's fields summed over the pool, with
    the same names): its load reconciles the gateway's live count, its rates replace the last."""
    state.load.report(stats.num_running + stats.num_waiting, stats.num_waiting_prompt_tokens)
    state.max_running = max(1, stats.max_running)
    state.kv_usage = stats.kv_usage
    state.prefill_tokens_per_s = stats.prefill_tokens_per_s
    state.decode_tokens_per_s = stats.decode_tokens_per_s
    state.decode_steps = tuple((step.batch_size, step.seconds) for step in stats.decode_steps)
    state.context_length = stats.context_length or None
    state.cached_block_hashes = frozenset(stats.cached_block_hashes)
    state.prefix_block_size = stats.prefix_block_size


def start_polling(poll_once: Callable[[], Awaitable[None]]) -> asyncio.Task:
    """Refresh a node's state every POLL_INTERVAL_S until the task is cancelled."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(POLL_INTERVAL_S)
            await poll_once()

    return asyncio.create_task(loop())

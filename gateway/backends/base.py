"""The interface the gateway's pipeline uses for any node."""

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from gateway.router import NodeState
from shared.proto import inference_pb2 as pb

logger = logging.getLogger("hybridgw.gateway")


class BackendError(Exception):
    """The node failed (unreachable, error status, timeout). `retryable` before the first token."""

    def __init__(self, message: str, status: int = 502, retryable: bool = True):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class DirectChunks:
    """A request's plain chunks (tokens, no error, not the last) handed to `consume` as the backend
    receives them, once the consumer sets it and for as long as it takes them (returns True);
    everything else still comes through generate()'s iterator, in order. A streaming handler
    writes each token this way from the node's reader callback: at 32 clients the node's steps
    deliver ~32 tokens at once, and waking each request's task for its token made a request that
    arrived meanwhile wait ~0.4 ms longer for its turn."""

    __slots__ = ("consume",)

    def __init__(self):
        self.consume: Callable[[pb.GenerateChunk], bool] | None = None

    def offer(self, item: object) -> bool:
        """What a backend's reader calls with each item for the request; True: taken."""
        consume = self.consume
        if (
            consume is None
            or type(item) is not pb.GenerateChunk
            or item.error
            or item.finish_reason != pb.FINISH_REASON_UNSPECIFIED
        ):
            return False
        try:
            return consume(item)
        except Exception:  # a failure of this request's own (a token id its detokenizer rejects)
            # must not end the stream's reader, which carries other requests: the request's task
            # takes this chunk and everything after it, and meets the error itself
            logger.exception("writing a token directly failed; the request's task takes over")
            self.consume = None
            return False


class Backend(Protocol):
    state: NodeState

    def generate(
        self,
        request: pb.GenerateRequest,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        direct: DirectChunks | None = None,
    ) -> AsyncIterator[list[pb.GenerateChunk]]:
        """The request's chunks in order, each time every one that is ready (at least one);
        `direct`: where plain chunks may go instead, when the consumer takes them (a backend
        that cannot hand them over synchronously ignores it)."""
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

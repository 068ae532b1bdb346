"""The interface the gateway's pipeline uses for any node."""

from collections.abc import AsyncIterator
from typing import Protocol

from gateway.router import NodeState
from shared.proto import inference_pb2 as pb


class BackendError(Exception):
    """The node failed (unreachable, error status, timeout). `retryable` before the first token."""

    def __init__(self, message: str, status: int = 502, retryable: bool = True):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class Backend(Protocol):
    state: NodeState

    def generate(
        self, request: pb.GenerateRequest, timeout_s: float, trace_headers: dict[str, str] | None = None
    ) -> AsyncIterator[pb.GenerateChunk]: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

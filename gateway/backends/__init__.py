"""Where requests run: edge nodes over gRPC, the cloud pool over Redis streams. Both yield the
node's GenerateChunks and keep a NodeState for the router."""

from gateway.backends.base import Backend, BackendError

__all__ = ["Backend", "BackendError"]

"""How a request's Redis reply stream is read: by the gateway, and by a worker that takes the
request over and resumes it. Both read it the same way, so both agree on what the client got.

Every worker that starts serving a request (first, or after claiming it from one that stopped
refreshing its claim: dead, or only paused) first appends a *fence* chunk naming itself as the
owner, then reads the stream up to its fence to learn the tokens already sent, then writes its
own chunks, each with its owner. A reader keeps the owner of the latest fence and counts only
that owner's chunks, each token index exactly once, in order. A paused worker that wakes up and
goes on writing is fenced off: its chunks come after the new owner's fence and do not count, so
the client never gets a token twice or two workers' tokens interleaved.
"""

from collections.abc import Callable

from shared.proto import inference_pb2 as pb

UNSPECIFIED = pb.FINISH_REASON_UNSPECIFIED


class ReplyGap(ValueError):
    """The current owner's chunk starts after the next token index: a token would be missing."""


def fence(request_id: str, owner: str) -> pb.GenerateChunk:
    return pb.GenerateChunk(request_id=request_id, owner=owner, fence=True)


class ReplyFollower:
    """Feed the stream's chunks in order to `accept`; it returns what counts of each (None: the
    chunk is a fence, a fenced-off owner's, or holds only tokens already counted)."""

    __slots__ = ("finished", "num_tokens", "owner", "rejected", "verify")

    def __init__(self, verify: Callable[[pb.GenerateChunk], bool] | None = None):
        """`verify`: whether a chunk (a fence too) is what its owner signed; what fails counts for
        nothing (shared/chunk_signing.py)."""
        self.owner: str | None = None
        self.num_tokens = 0
        self.finished = False
        self.verify = verify
        self.rejected = 0

    def accept(self, chunk: pb.GenerateChunk) -> pb.GenerateChunk | None:
        if self.verify is not None and not self.verify(chunk):
            self.rejected += 1
            return None
        if chunk.fence:
            self.owner = chunk.owner
            return None
        if self.finished or chunk.owner != self.owner:
            return None
        if chunk.error:
            self.finished = True
            return chunk
        already = self.num_tokens - chunk.index
        if already < 0:
            raise ReplyGap(f"tokens {self.num_tokens}..{chunk.index - 1} of {chunk.request_id} are missing")
        if already:
            if already >= len(chunk.tokens) and chunk.finish_reason == UNSPECIFIED:
                return None
            del chunk.tokens[:already]
            chunk.index += already
        self.num_tokens += len(chunk.tokens)
        self.finished = chunk.finish_reason != UNSPECIFIED
        return chunk

"""A choice on its nodes: one attempt per node, and a choice whose node fails after its first
token resumes on another node that can take it (never a private request off the edge: the
router decides), from the prompt plus every token already sent, so the client sees one
unbroken stream. The choice's sink is the same throughout (its detokenizer, stop strings and
counts continue); each attempt gets an AttemptSink in front of it, so a node's failure ends the
attempt rather than the choice.
"""

import asyncio
from collections.abc import Awaitable, Callable

from gateway.backends.base import Backend, BackendError
from gateway.backends.client_request import ClientRequest
from gateway.output.token_sink import ChoiceSink
from gateway.routing.dispatched_request import Dispatched
from shared.proto import inference_pb2 as pb

# the next node for a choice whose node failed: (failed node id, prompt + tokens sent) ->
# (backend, its Dispatched) or None when no other node can take it
Resumer = Callable[[str, int], Awaitable[tuple[Backend, Dispatched] | None]]


class AttemptSink:
    """One node's attempt at a choice: its chunks go on to the choice; its failure is its own."""

    __slots__ = ("_failed", "choice")

    def __init__(self, choice: ChoiceSink):
        self.choice = choice
        self._failed: asyncio.Future = asyncio.get_running_loop().create_future()

    @property
    def finished(self) -> bool:
        return self.choice.finished or self._failed.done()

    def put(self, chunk: pb.GenerateChunk) -> None:
        if not self._failed.done():
            self.choice.put(chunk)

    def fail(self, error: BaseException) -> None:
        if not self._failed.done():
            self._failed.set_exception(error)
            self._failed.exception()  # retrieved: the attempt's owner reads it from wait()

    async def wait(self) -> None:
        """Returns once the choice finished; raises the attempt's failure (or the choice's)."""
        done = self.choice.done_future
        await asyncio.wait((done, self._failed), return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            raise self._failed.exception()
        done.result()


async def run_attempts(
    backend: Backend,
    request: pb.GenerateRequest,
    choice: ChoiceSink,
    timeout_s: float,
    trace_headers: dict[str, str] | None,
    resume: Resumer | None,
    dispatches: list[Dispatched],
    client: ClientRequest | None = None,
) -> None:
    """Attempts until the choice finished; raises the failure that cannot be resumed (any before
    the first token: the dispatcher retries those with the whole request)."""
    original = request
    while True:
        try:
            await backend.run(request, AttemptSink(choice), timeout_s, trace_headers, client)
            if not choice.finished:
                raise BackendError(f"node {backend.state.node_id} ended the request without its last token")
            return
        except BackendError as error:
            started = choice.first_token_at is not None
            if choice.finished or not started or not error.retryable or resume is None:
                raise
            sent = choice.token_ids
            target = await resume(backend.state.node_id, len(original.prompt_token_ids) + len(sent))
            if target is None:
                raise
            backend, dispatched = target
            dispatches[-1].finished()  # the failed node runs it no more
            dispatches.append(dispatched)
            choice.on_tokens = dispatched.advance  # the pace is the new node's
            request = resumed_request(original, sent)


def resumed_request(original: pb.GenerateRequest, sent: list[int]) -> pb.GenerateRequest:
    """The request again, continuing after the tokens already sent."""
    again = pb.GenerateRequest()
    again.CopyFrom(original)
    again.resume_token_ids[:] = [*original.resume_token_ids, *sent]
    again.sampling.max_tokens = original.sampling.max_tokens - len(sent)
    again.sampling.min_tokens = max(0, original.sampling.min_tokens - len(sent))
    return again

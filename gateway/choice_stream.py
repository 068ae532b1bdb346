"""One choice's stream of text events from its node (detokenized, stop strings applied, counted
on its node until it ends), and several choices' streams interleaved as their events arrive."""

import asyncio
import time
from collections.abc import AsyncGenerator

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from gateway.backends.base import Backend, BackendError
from gateway.errors import APIError
from gateway.generation import Generation, TextEvent
from gateway.inbox import Inbox
from gateway.models import ServedModel
from gateway.schemas import GenerationRequest
from gateway.text_stream import TextStream
from shared.proto import inference_pb2 as pb
from shared.telemetry import inject_context, tracer

REQUEST_TIMEOUT_S = 600.0
FINISH_NAMES = {pb.FINISH_REASON_STOP: "stop", pb.FINISH_REASON_LENGTH: "length"}
UNSPECIFIED = pb.FINISH_REASON_UNSPECIFIED


def text_stream(
    texts: list[TextStream | None], index: int, request: GenerationRequest, model: ServedModel
) -> TextStream:
    """The choice's detokenizer: made while the node works, or at its first chunks by a backend
    that answers without waiting (the dispatch work has not run yet then)."""
    text = texts[index]
    if text is None:
        text = texts[index] = TextStream(model.tokenizer, request.stop)
    return text


async def choice_stream(
    backend: Backend,
    generation: Generation,
    texts: list[TextStream | None],
    index: int,
    prompt: tuple[list[int], str],  # token ids, cache salt
    request: GenerationRequest,
    max_tokens: int,
    model: ServedModel,
    forwarded: dict[str, str] | None,
) -> AsyncGenerator[list[TextEvent]]:
    """One choice's events, each a list of one: the text of every token that was ready. A node
    failure before the first event is a BackendError (the request may go elsewhere), after it an
    APIError."""
    sampling = pb.SamplingParams(
        temperature=request.temperature,
        top_p=request.top_p,
        max_tokens=max_tokens,
        presence_penalty=request.presence_penalty,
        frequency_penalty=request.frequency_penalty,
        logprobs=request.top_logprobs,
        ignore_eos=request.ignore_eos,
    )
    if request.seed is not None:
        sampling.seed = request.seed + index
    ids, salt = prompt
    node_request = pb.GenerateRequest(
        request_id=f"{generation.request_id}-{index}",
        model=model.name,
        prompt_token_ids=ids,
        sampling=sampling,
        priority=request.priority,
        cache_salt=salt,
    )
    dispatched = generation.dispatches[index]
    span, trace_headers = None, forwarded
    if forwarded is None:  # recording: the dispatch span, whose context goes to the node
        span = tracer("hybridgw.gateway").start_span(
            f"generate {backend.state.node_id}",
            kind=SpanKind.CLIENT,
            attributes={
                "hybridgw.node": backend.state.node_id,
                "hybridgw.target": backend.state.kind.value,
                "gen_ai.request.model": model.name,
            },
        )
        with trace.use_span(span, end_on_exit=False):
            trace_headers = inject_context()
    batches = backend.generate(node_request, REQUEST_TIMEOUT_S, trace_headers, generation.direct)
    text = None
    plain = not request.logprobs and not request.stop  # no logprobs to keep, no stop string to find
    try:
        async for chunks in batches:
            if text is None:  # the first chunks
                dispatched.first_token()
                generation.first_token_at = generation.first_token_at or time.perf_counter()
                text = text_stream(texts, index, request, model)  # made while the node worked
            if plain and len(chunks) == 1:  # the usual batch: one chunk of one token, not the last
                tokens = chunks[0].tokens
                if len(tokens) == 1 and chunks[0].finish_reason == UNSPECIFIED:
                    generation.completion_tokens += 1
                    yield [TextEvent(index, text.push(tokens[0].token_id))]
                    continue
            event = TextEvent(index, "")
            if request.logprobs:
                event.logprobs = [token for chunk in chunks for token in chunk.tokens]
            pieces = []
            for chunk in chunks:
                tokens = chunk.tokens
                for token in tokens:
                    pieces.append(text.push(token.token_id))
                generation.completion_tokens += len(tokens)
                if chunk.finish_reason != UNSPECIFIED or text.stopped:
                    pieces.append(text.finish())
                    event.text = "".join(pieces)
                    event.finish_reason = (
                        "stop" if text.stopped else FINISH_NAMES.get(chunk.finish_reason, "stop")
                    )
                    generation.cached_tokens = max(generation.cached_tokens, chunk.usage.cached_tokens)
                    yield [event]
                    return
            event.text = "".join(pieces)
            yield [event]
    except BackendError as error:
        if text is None:  # before the first event: the request may still go elsewhere
            raise
        raise APIError(error.status, str(error), "server_error") from None
    finally:
        dispatched.finished()
        if span is not None:
            span.end()
        await batches.aclose()


async def interleave(streams: list[AsyncGenerator[list[TextEvent]]]) -> AsyncGenerator[list[TextEvent]]:
    """The choices' events as they arrive, each time all that are ready: a client slower than the
    node gets fewer, larger writes."""
    inbox = Inbox()
    done = object()

    async def pump(stream) -> None:
        try:
            async for events in stream:
                inbox.put(events)
        except APIError as error:
            inbox.put(error)
        finally:
            inbox.put(done)

    tasks = [asyncio.create_task(pump(stream)) for stream in streams]
    remaining = len(tasks)
    try:
        while remaining:
            batch = []
            for item in await inbox.take_all():
                if item is done:
                    remaining -= 1
                elif isinstance(item, APIError):
                    raise item
                else:
                    batch += item
            if batch:
                yield batch
    finally:
        for task in tasks:
            task.cancel()

"""A routed request's choices started on their node: each choice's sink (its detokenizer, stop
strings and tool-call parser, gateway/output/), its count on the node, and the task that runs it
(the backend feeds the sink; a dispatch span carries the trace to the node; a node that fails
after the first token hands the choice to `resume`: gateway/dispatch/choice_attempts.py)."""

import asyncio
import functools
import time

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from gateway.backends.base import Backend
from gateway.backends.client_request import ClientRequest
from gateway.dispatch.choice_attempts import Resumer, run_attempts
from gateway.dispatch.outbound_messages import OutboundRequest
from gateway.dispatch.prefix_cache import PromptBlocks, prompt_block_hashes
from gateway.dispatch.recorded_dispatch import once_recorded
from gateway.output.generation import Generation
from gateway.output.text_stream import TextStream
from gateway.output.token_sink import ChoiceSink, EventSink
from gateway.privacy import PrivacyDecision
from gateway.request.prepared_request import PreparedRequest
from gateway.routing.dispatched_request import Dispatched
from gateway.routing.route_types import Decision
from gateway.tools.tool_request import tool_parser
from shared.proto import inference_pb2 as pb
from shared.telemetry import inject_context, tracer

REQUEST_TIMEOUT_S = 600.0


def launch(
    prepared: PreparedRequest,
    outbound: OutboundRequest,
    decision: Decision,
    backend: Backend,
    privacy: PrivacyDecision,
    prompt: PromptBlocks,
    output: EventSink,
    expected_tokens: int,
    resume: Resumer,
    num_cached: int = 0,
    recorded: asyncio.Future | None = None,
) -> Generation:
    """Every choice's node request started (counted on the node at once, before this task
    first waits: the next request of a burst, routed meanwhile, sees it). `num_cached`: the
    prompt tokens the node's prefix cache is predicted to hold, which it will not compute
    (counted as work ahead, a shared 800-token prefix made the cloud look 20 s behind)."""
    node = backend.state
    prediction = decision.prediction_for(node.node_id)
    end = time.monotonic() + (prediction.e2e_s if prediction is not None else 0.0)
    body = prepared.body
    generation = Generation(
        prepared.request_id,
        prepared.model.name,
        node,
        decision.reason,
        prepared.num_prompt_tokens,
        privacy,
        prediction,
        predicted_cached_tokens=num_cached,
        alternatives=decision.predictions,
    )
    hashes = prompt_block_hashes(node, prompt)
    ttft_s = prediction.ttft_s if prediction is not None else 0.0
    if privacy.is_private:
        node.load.last_private_at = time.monotonic()  # its edge guards slots (routing/edge_guard.py)
    for index in range(prepared.num_choices):
        uncached = max(0, len(prepared.choice_prompt(index)) - num_cached)
        dispatched = node.load.dispatch(uncached, end, expected_tokens, num_cached, hashes, ttft_s)
        text = TextStream(prepared.model.tokenizer, body.stop, body.min_tokens)
        tools = tool_parser(prepared.model, body, prepared.max_tokens)
        keep_tokens = body.logprobs or body.return_token_ids
        sink = ChoiceSink(index, text, output, keep_tokens, dispatched.advance, tools, body.max_tokens == 0)
        request = outbound.requests[index]
        run = functools.partial(
            run_choice, backend, request, sink, prepared.forwarded, dispatched, resume, outbound.client
        )
        task = asyncio.create_task(once_recorded(recorded, run))
        generation.dispatches.append(dispatched)
        generation.sinks.append(sink)
        generation.tasks.append(task)
    return generation


async def run_choice(
    backend: Backend,
    request: pb.GenerateRequest,
    sink: ChoiceSink,
    forwarded: dict[str, str] | None,
    dispatched: Dispatched,
    resume: Resumer | None = None,
    client: ClientRequest | None = None,
) -> None:
    """The backend feeds `sink` until the choice ends (after a node failure past the first
    token, `resume` may give another node: gateway/dispatch/choice_attempts.py); a failure that cannot be
    resumed, or anything else that ends the request early, fails the sink, and the handler sees
    it. `forwarded`: the caller's trace headers when no spans are recorded."""
    span, trace_headers = None, forwarded
    if forwarded is None:  # recording: the dispatch span, whose context goes to the node
        span = tracer("hybridgw.gateway").start_span(
            f"generate {backend.state.node_id}",
            kind=SpanKind.CLIENT,
            attributes={
                "hybridgw.node": backend.state.node_id,
                "hybridgw.target": backend.state.kind.value,
                "gen_ai.request.model": request.model,
            },
        )
        with trace.use_span(span, end_on_exit=False):
            trace_headers = inject_context()
    dispatches = [dispatched]
    try:
        await run_attempts(
            backend, request, sink, REQUEST_TIMEOUT_S, trace_headers, resume, dispatches, client
        )
    except Exception as error:
        sink.fail(error)
    finally:
        for each in dispatches:
            each.finished()
        if span is not None:
            span.end()

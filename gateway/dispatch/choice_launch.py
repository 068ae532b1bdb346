"""One choice of a request on its node: the GenerateRequest message, and the task that runs it
(the backend feeds the choice's sink; a dispatch span carries the trace to the node)."""

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from gateway.backends.base import Backend
from gateway.backends.client_request import ClientRequest
from gateway.dispatch.choice_attempts import Resumer, run_attempts
from gateway.output.token_sink import ChoiceSink
from gateway.request.prepared_request import PreparedRequest
from gateway.routing.dispatched_request import Dispatched
from shared.proto import inference_pb2 as pb
from shared.telemetry import inject_context, tracer

REQUEST_TIMEOUT_S = 600.0


def node_request(prepared: PreparedRequest, index: int, cache_salt: str) -> pb.GenerateRequest:
    body = prepared.body
    sampling = pb.SamplingParams(
        temperature=body.temperature,
        top_p=body.top_p,
        top_k=max(0, body.top_k),  # -1 (vLLM's "off") is the proto's 0
        min_p=body.min_p,
        repetition_penalty=body.repetition_penalty,
        max_tokens=prepared.max_tokens,
        presence_penalty=body.presence_penalty,
        frequency_penalty=body.frequency_penalty,
        stop_token_ids=body.stop_token_ids,
        logprobs=body.top_logprobs,
        ignore_eos=body.ignore_eos,
        structured_output=prepared.structured_output,
        logit_bias=body.logit_bias,
        min_tokens=body.min_tokens,
    )
    if body.seed is not None:  # OpenAI takes any int64 seed; each prompt's samples count from it
        sampling.seed = (body.seed + index % body.n) % 2**64
    if body.echo and body.logprobs:
        sampling.prompt_logprobs = body.top_logprobs
    return pb.GenerateRequest(
        request_id=f"{prepared.request_id}-{index}",
        model=prepared.model.name,
        prompt_token_ids=prepared.choice_prompt(index),
        sampling=sampling,
        priority=body.priority,
        cache_salt=cache_salt,
        ttft_target_ms=(prepared.context.targets.ttft_s or 0.0) * 1000,
        tpot_target_ms=(prepared.context.targets.tpot_s or 0.0) * 1000,
    )


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

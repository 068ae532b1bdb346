"""Between shared/proto messages and the engines' own types (both engines, both transports)."""

from collections.abc import Sequence
from dataclasses import fields

from google.protobuf.json_format import MessageToDict

from shared.engine import EngineRequest, FinishReason, NodeStats, StepOutput
from shared.proto import inference_pb2 as pb
from shared.sampling import SampledToken, SamplingParams
from shared.structured_output import StructuredOutputsParams

FINISH_REASONS = {
    FinishReason.STOP: pb.FINISH_REASON_STOP,
    FinishReason.LENGTH: pb.FINISH_REASON_LENGTH,
    FinishReason.ABORT: pb.FINISH_REASON_ABORT,
}


def sampling_from_proto(message: pb.SamplingParams) -> SamplingParams:
    """Unset fields take the OpenAI defaults; raises InvalidSamplingParams when out of range."""
    return SamplingParams(
        temperature=message.temperature,
        top_k=message.top_k,
        top_p=message.top_p or 1.0,
        min_p=message.min_p,
        seed=message.seed if message.HasField("seed") else None,
        repetition_penalty=message.repetition_penalty or 1.0,
        presence_penalty=message.presence_penalty,
        frequency_penalty=message.frequency_penalty,
        max_tokens=message.max_tokens or 256,
        stop_token_ids=tuple(message.stop_token_ids),
        ignore_eos=message.ignore_eos,
        logprobs=message.logprobs,
        structured_outputs=StructuredOutputsParams(llguidance=message.structured_output)
        if message.structured_output
        else None,
        logit_bias=dict(message.logit_bias),
        min_tokens=message.min_tokens,
        prompt_logprobs=message.prompt_logprobs if message.HasField("prompt_logprobs") else None,
    )


def engine_request_from_proto(
    message: pb.GenerateRequest, params: SamplingParams, request_id: str, resumed: Sequence[int] = ()
) -> EngineRequest:
    """The engine's request for a GenerateRequest; `resumed`: tokens already streamed (by an
    earlier attempt) that continue the prompt."""
    prompt = (*message.prompt_token_ids, *resumed)
    return EngineRequest(
        request_id,
        prompt,
        params,
        message.priority,
        message.cache_salt,
        len(resumed),
        message.ttft_target_ms / 1000,
        message.tpot_target_ms / 1000,
    )


def chunk_from_outputs(request_id: str, outputs: list[StepOutput], num_resumed: int = 0) -> pb.GenerateChunk:
    """Consecutive tokens of one request as one GenerateChunk (index of the first); the finish
    reason and usage, if any, are the last output's."""
    chunk = pb.GenerateChunk(
        request_id=request_id,
        index=outputs[0].index + num_resumed,
        tokens=[_token(o.token) for o in outputs],
        prompt_logprobs=[_token(t) for t in outputs[0].prompt_logprobs],
    )
    output = outputs[-1]
    if output.finish_reason is not None:
        chunk.finish_reason = FINISH_REASONS[output.finish_reason]
        chunk.usage.prompt_tokens = output.num_prompt_tokens - num_resumed
        chunk.usage.completion_tokens = output.index + 1 + num_resumed
        chunk.usage.cached_tokens = output.num_cached_tokens
    return chunk


def _token(token: SampledToken) -> pb.GeneratedToken:
    return pb.GeneratedToken(
        token_id=token.token_id,
        logprob=token.logprob,
        top_logprobs=[pb.TokenLogprob(token_id=i, logprob=lp) for i, lp in token.top_logprobs],
    )


def stats_to_proto(stats: NodeStats, **identity) -> pb.NodeStats:
    """An engine's snapshot as the Stats reply; `identity`: node_id, model, draining."""
    values = {field.name: getattr(stats, field.name) for field in fields(stats)}
    values["decode_steps"] = [pb.DecodeStep(batch_size=b, seconds=s) for b, s in stats.decode_steps]
    return pb.NodeStats(**values, **identity)


def stats_to_heartbeat(stats: NodeStats) -> dict:
    """The snapshot as a cloud worker's heartbeat JSON (proto field names; unset fields left out)."""
    return MessageToDict(stats_to_proto(stats), preserving_proto_field_name=True)

"""The sampling fields both OpenAI generation endpoints share, as the core request takes them;
parameters declared but not implemented are refused by name."""

from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.openai_models import NOT_IMPLEMENTED, SamplingFields
from gateway.prompt.structured_output_fields import structured_outputs_of

GREEDIEST_TOP_P = 1e-9  # top_p 0 (OpenAI accepts it): only the most likely token is kept
# OpenAI's service tiers as vLLM's `priority` (lower runs first where a node has requests waiting)
TIER_PRIORITY = {"priority": -1, "flex": 1}


def sampling_request(body: SamplingFields, messages, prompts) -> GenerationRequest:
    if body.stream_options is not None and not body.stream:
        raise invalid("'stream_options' is only allowed with 'stream': true.", "stream_options")
    for name, defaults in NOT_IMPLEMENTED.items():
        value = getattr(body, name, None)
        if not any(value == default and type(value) is type(default) for default in defaults):
            raise invalid(f"'{name}' is not supported by this server.", name, "unsupported_parameter")
    return GenerationRequest(
        model=body.model,
        messages=messages,
        prompts=prompts,
        stream=body.stream,
        include_usage=body.stream_options is not None and body.stream_options.include_usage,
        continuous_usage=body.stream_options is not None and body.stream_options.continuous_usage_stats,
        n=body.n,
        max_tokens=body.max_tokens,
        temperature=body.temperature,
        top_p=body.top_p or GREEDIEST_TOP_P,
        top_k=body.top_k,
        min_p=body.min_p,
        repetition_penalty=body.repetition_penalty,
        seed=body.seed,
        stop=[body.stop] if isinstance(body.stop, str) else list(body.stop or []),
        stop_token_ids=list(body.stop_token_ids or []),
        presence_penalty=body.presence_penalty,
        frequency_penalty=body.frequency_penalty,
        user=body.user,
        priority=body.priority or TIER_PRIORITY.get(getattr(body, "service_tier", None), 0),
        service_tier=getattr(body, "service_tier", None),
        ignore_eos=body.ignore_eos,
        structured_outputs=structured_outputs_of(body),
        logit_bias={int(k): v for k, v in (body.logit_bias or {}).items()},
        min_tokens=body.min_tokens,
    )

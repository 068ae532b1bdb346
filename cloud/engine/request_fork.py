"""n > 1: once a request's prompt is computed, n-1 children share its blocks (the partly filled
last block is copied on its first write) and each samples its own first token from the same
logits (vLLM's parallel sampling)."""

from dataclasses import replace

from cloud.engine.block_manager import BlockManager
from cloud.engine.request import Request, RequestStatus
from cloud.engine.scheduler import Scheduler
from shared.batch_sampler import sample_batch
from shared.engine import EngineRequest
from shared.grammar_matcher import GrammarCompiler
from shared.request_state import request_grammar


def fork_request(
    parent: Request,
    count: int,
    logits,
    now: float,
    block_manager: BlockManager,
    scheduler: Scheduler,
    grammars: GrammarCompiler,
) -> list[Request]:
    """`count - 1` running children of `parent`; `logits`: (vocab,), the row its first token
    came from. Child `i`'s seed is the parent's plus `i`."""
    children = []
    for index in range(1, count):
        child = _child(parent, index, grammars)
        child.num_computed_tokens = len(parent.prompt_token_ids)
        child.num_cached_tokens = parent.num_cached_tokens
        child.status = RequestStatus.RUNNING
        block_manager.fork(parent, child)
        (token,) = sample_batch(logits[None], [child.sampler])
        child.output_token_ids.append(token.token_id)
        child.output_logprobs.append(token)
        child.first_token_time = now
        scheduler.adopt(child)
        children.append(child)
    return children


def _child(parent: Request, index: int, grammars: GrammarCompiler) -> Request:
    seed = parent.sampling_params.seed
    params = replace(parent.sampling_params, n=1, seed=None if seed is None else seed + index)
    return Request(
        f"{parent.request_id}#{index}",
        parent.prompt_token_ids,
        params,
        priority=parent.priority,
        cache_salt=parent.cache_salt,
        ttft_target_s=parent.ttft_target_s,
        tpot_target_s=parent.tpot_target_s,
        arrival_time=parent.arrival_time,
        grammar=request_grammar(EngineRequest(parent.request_id, (0,), params), grammars),
        end_ids=parent.end_ids,
    )

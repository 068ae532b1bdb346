"""Sampling a whole batch at once, on the engine's device (vLLM's Sampler).

The same chain as the per-request sampler (shared/sampling.py), as tensor operations over the
batch: penalties, logit bias, min_tokens and grammar masks, logprobs; then greedy rows take the
argmax while the other rows go through top-k, top-p and min-p on the sorted logits, temperature,
and an inverse-CDF draw with one uniform from each request's own seeded generator — the draw
numpy's `Generator.choice` makes, so a seed gives the same tokens either way (tested). Each
request's `Sampler` keeps its state (generator, counts, grammar); this module only computes.
All math is float64, as in the per-request sampler.
"""

import torch

from shared.sampling import SampledToken, Sampler


def sample_batch(logits: torch.Tensor, samplers: list[Sampler]) -> list[SampledToken]:
    """logits (R, vocab) float, row i for samplers[i] -> each row's next token, recorded in its
    sampler (counts, grammar)."""
    logits = logits.to(torch.float64)  # (R, vocab), a copy: the caller's logits stay untouched
    _apply_penalties(logits, samplers)
    _apply_bias_and_masks(logits, samplers)
    logprobs = logits - torch.logsumexp(logits, dim=-1, keepdim=True)  # (R, vocab)
    token_ids = torch.argmax(logits, dim=-1)  # (R,) greedy: the first maximum, as numpy
    drawn = [row for row, sampler in enumerate(samplers) if sampler.params.temperature > 0]
    if drawn:
        token_ids[drawn] = _draw(logits[drawn], [samplers[row] for row in drawn])
    chosen = logprobs.gather(1, token_ids[:, None])[:, 0]  # (R,)
    width = max(sampler.params.logprobs for sampler in samplers)
    top_values, top_ids = torch.topk(logprobs, width, dim=-1) if width else (logprobs[:, :0],) * 2
    tokens = []
    rows = zip(token_ids.tolist(), chosen.tolist(), top_ids.tolist(), top_values.tolist(), strict=True)
    for sampler, (token_id, logprob, ids, values) in zip(samplers, rows, strict=True):
        sampler.record(token_id)
        count = sampler.params.logprobs
        top = [(i, v) for i, v in zip(ids[:count], values[:count], strict=True) if v != float("-inf")]
        tokens.append(SampledToken(token_id, logprob, top))
    return tokens


def _apply_penalties(logits: torch.Tensor, samplers: list[Sampler]) -> None:
    """Repetition penalty over prompt and output tokens; presence and frequency over the output."""
    device = logits.device
    for row, sampler in enumerate(samplers):
        params = sampler.params
        if params.repetition_penalty != 1.0:
            seen = torch.tensor(list((sampler.prompt_counts | sampler.output_counts).keys()), device=device)
            values = logits[row, seen]
            penalty = params.repetition_penalty
            logits[row, seen] = torch.where(values > 0, values / penalty, values * penalty)
        if (params.presence_penalty or params.frequency_penalty) and sampler.output_counts:
            ids = torch.tensor(list(sampler.output_counts.keys()), device=device)
            counts = torch.tensor(list(sampler.output_counts.values()), dtype=torch.float64, device=device)
            logits[row, ids] -= params.presence_penalty + params.frequency_penalty * counts


def _apply_bias_and_masks(logits: torch.Tensor, samplers: list[Sampler]) -> None:
    """logit_bias, then min_tokens and the grammar (masked on the host: the grammar engine
    fills numpy rows)."""
    for row, sampler in enumerate(samplers):
        bias = sampler.params.logit_bias
        if bias:
            ids = torch.tensor(list(bias.keys()), device=logits.device)
            logits[row, ids] += torch.tensor(list(bias.values()), dtype=torch.float64, device=logits.device)
        if sampler.grammar is not None or sampler.holds_back:
            host = logits[row].cpu()  # (vocab,); the same storage on a CPU engine
            sampler.constrain(host.numpy())
            logits[row] = host.to(logits.device)


def _draw(logits: torch.Tensor, samplers: list[Sampler]) -> torch.Tensor:
    """logits (S, vocab) float64 of rows with temperature > 0 -> (S,) drawn token ids."""
    device, vocab = logits.device, logits.shape[-1]
    column = lambda values, dtype=torch.float64: torch.tensor(values, dtype=dtype, device=device)[:, None]  # noqa: E731
    params = [sampler.params for sampler in samplers]
    ordered, order = torch.sort(logits, dim=-1, descending=True, stable=True)  # (S, vocab)
    ranks = torch.arange(vocab, device=device)[None, :]  # (1, vocab)
    top_k = column([p.top_k or vocab for p in params], torch.int64)
    keep = ranks < top_k  # (S, vocab)
    probs = torch.exp(ordered - ordered[:, :1]) * keep
    probs /= probs.sum(dim=-1, keepdim=True)
    top_p = column([p.top_p for p in params])
    cut = torch.searchsorted(torch.cumsum(probs, dim=-1), top_p) + 1  # (S, 1)
    keep &= (ranks < cut) | (top_p >= 1.0)
    keep &= probs >= column([p.min_p for p in params]) * probs[:, :1]
    scaled = torch.where(keep, ordered / column([p.temperature for p in params]), -torch.inf)
    weights = torch.exp(scaled - scaled[:, :1])
    weights /= weights.sum(dim=-1, keepdim=True)
    cdf = torch.cumsum(weights, dim=-1)
    cdf = cdf / cdf[:, -1:]
    uniforms = column([sampler.rng.random() for sampler in samplers])  # (S, 1)
    picked = torch.searchsorted(cdf, uniforms, right=True).clamp_(max=vocab - 1)  # (S, 1)
    return order.gather(1, picked)[:, 0]

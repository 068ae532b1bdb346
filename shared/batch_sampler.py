"""Sampling a whole batch at once, on the engine's own arrays (vLLM's Sampler), for both engines.

One chain, written against the Python array API (array_api_compat), so the cloud engine runs it on
torch tensors on its device and the edge on numpy arrays without importing torch: penalties,
logit bias, min_tokens and grammar masks, logprobs; then greedy rows take the argmax while the
other rows go through top-k, top-p and min-p in descending order (llama.cpp's order), temperature,
and an inverse-CDF draw with one uniform from each request's own seeded generator
(shared/batch_draw.py: decided among each row's best tokens where it can be, without a sort).
Each request's `Sampler` (shared/sampling.py) keeps its state (generator, counts, grammar); this
module only computes. All math is float64.
"""

from typing import Any

import numpy as np
from array_api_compat import array_namespace, device, is_numpy_array

from shared.batch_draw import draw
from shared.sampling import SampledToken, Sampler
from shared.softmax_mass import softmax_mass

Array = Any  # numpy.ndarray or torch.Tensor: whatever the engine's logits are


def sample_batch(logits: Array, samplers: list[Sampler]) -> list[SampledToken]:
    """logits (R, vocab) float, row i for samplers[i] -> each row's next token, recorded in its
    sampler (counts, grammar). The caller's logits stay untouched."""
    if not samplers:  # a step of prompt chunks only
        return []
    xp = array_namespace(logits)
    logits = xp.astype(logits, xp.float64, copy=True)  # (R, vocab)
    _apply_penalties(xp, logits, samplers)
    _apply_bias_and_masks(xp, logits, samplers)
    peak = xp.max(logits, axis=-1, keepdims=True)  # (R, 1)
    log_mass = peak + xp.log(softmax_mass(xp, logits, peak))  # (R, 1)
    token_ids = xp.argmax(logits, axis=-1)  # (R,) greedy: the first maximum
    drawn = [row for row, sampler in enumerate(samplers) if sampler.params.temperature > 0]
    if drawn:
        token_ids[drawn] = _draw(xp, logits[drawn], [samplers[row] for row in drawn])
    # logprobs = logits - log_mass, taken only where they are reported (no (R, vocab) pass)
    chosen = (xp.take_along_axis(logits, token_ids[:, None], axis=1) - log_mass)[:, 0]  # (R,)
    top_ids, top_logits = _top(logits, max(sampler.params.logprobs for sampler in samplers))
    top_values = top_logits - log_mass
    tokens = []
    rows = zip(token_ids.tolist(), chosen.tolist(), top_ids.tolist(), top_values.tolist(), strict=True)
    for sampler, (token_id, logprob, ids, values) in zip(samplers, rows, strict=True):
        sampler.record(token_id)
        count = sampler.params.logprobs
        top = [(i, v) for i, v in zip(ids[:count], values[:count], strict=True) if v != float("-inf")]
        tokens.append(SampledToken(token_id, logprob, top))
    return tokens


def _top(logits: Array, width: int) -> tuple[Array, Array]:
    """logits (R, vocab) -> (ids, values), each (R, width), best first; ties by lower id. The
    standard has no top-k, so each library's own partial selection."""
    if width == 0:
        return logits[:, :0], logits[:, :0]
    if not is_numpy_array(logits):
        values, ids = logits.topk(width, dim=-1)
        return ids, values
    best = np.argpartition(-logits, width - 1, axis=-1)[:, :width]  # (R, width), unordered
    order = np.argsort(-np.take_along_axis(logits, best, axis=-1), axis=-1, kind="stable")
    ids = np.take_along_axis(best, order, axis=-1)
    return ids, np.take_along_axis(logits, ids, axis=-1)


def _apply_penalties(xp, logits: Array, samplers: list[Sampler]) -> None:
    """Repetition penalty over prompt and output tokens, then presence and frequency over the
    output: each one scatter over the batch, its (row, token) pairs gathered from every request's
    token counts."""
    repetition, occurrence = [], []
    for row, sampler in enumerate(samplers):
        params = sampler.params
        if params.repetition_penalty != 1.0:
            seen = sampler.prompt_counts | sampler.output_counts
            repetition += [(row, token_id, params.repetition_penalty) for token_id in seen]
        if params.presence_penalty or params.frequency_penalty:
            occurrence += [
                (row, token_id, params.presence_penalty + params.frequency_penalty * count)
                for token_id, count in sampler.output_counts.items()
            ]
    if repetition:
        rows, ids, penalty = _columns(xp, logits, repetition)
        values = logits[rows, ids]
        logits[rows, ids] = xp.where(values > 0, values / penalty, values * penalty)
    if occurrence:
        rows, ids, amount = _columns(xp, logits, occurrence)
        logits[rows, ids] -= amount


def _apply_bias_and_masks(xp, logits: Array, samplers: list[Sampler]) -> None:
    """logit_bias (one scatter over the batch), then min_tokens and the grammar (masked on the
    host, row by row: the grammar engine fills numpy rows)."""
    bias = [
        (row, token_id, value)
        for row, sampler in enumerate(samplers)
        for token_id, value in sampler.params.logit_bias.items()
    ]
    if bias:
        rows, ids, values = _columns(xp, logits, bias)
        logits[rows, ids] += values
    for row, sampler in enumerate(samplers):
        if sampler.grammar is None and not sampler.holds_back:
            continue
        if is_numpy_array(logits):
            sampler.constrain(logits[row])  # (vocab,) a view: masked in place
            continue
        host = logits[row].cpu()  # (vocab,); the same storage on a CPU engine
        sampler.constrain(host.numpy())
        logits[row] = host.to(logits.device)


def _columns(xp, logits: Array, entries: list[tuple[int, int, float]]) -> tuple[Array, Array, Array]:
    """(row, token id, value) entries -> rows (N,), token ids (N,), values (N,) float64 on the
    logits' device."""
    rows, ids, values = zip(*entries, strict=True)
    on = device(logits)
    as_index = lambda column: xp.asarray(column, dtype=xp.int64, device=on)  # noqa: E731
    return as_index(rows), as_index(ids), xp.asarray(values, dtype=xp.float64, device=on)


def _draw(xp, logits: Array, samplers: list[Sampler]) -> Array:
    """logits (S, vocab) float64 of rows with temperature > 0 -> (S,) drawn token ids; one uniform
    from each request's generator, in row order."""
    uniforms = [sampler.rng.random() for sampler in samplers]
    return draw(xp, logits, [sampler.params for sampler in samplers], uniforms)

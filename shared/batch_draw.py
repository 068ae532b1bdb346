"""The draw of the batched sampler: top-k, top-p and min-p on the logits in descending order, then
temperature, then an inverse-CDF draw with each row's uniform — without sorting the vocabulary
where the outcome is decided among a row's best few tokens.

A full sort costs milliseconds per row on a CPU (49,152 float64 logits), more than a decode step's
share of the model. So each row first takes its `CANDIDATES` highest logits, ordered as the full
stable sort would order them (value descending, index ascending), and works out the chain on that
prefix, with the two sums that reach past it (the softmax mass and, under min-p alone, the kept
weight) taken over the whole row unsorted. A row is decided there when its top-k, its top-p cut
and its drawn position all fall inside the prefix; only the rows that are not go through the full
sort, which is the chain itself. Either way a row gets the token the full sort gives it (tested).
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from array_api_compat import device, is_numpy_array

from shared.sampling import SamplingParams
from shared.softmax_mass import softmax_mass

Array = Any  # numpy.ndarray or torch.Tensor
CANDIDATES = 256  # measured: 64 leaves top-p 0.9 rows of a trained model undecided, 1024 costs more


def draw(xp, logits: Array, params: Sequence[SamplingParams], uniforms: Sequence[float]) -> Array:
    """logits (S, vocab) float64, one row per request with temperature > 0 -> (S,) token ids."""
    columns = _Columns(xp, device(logits), params, uniforms, logits.shape[-1])
    token_ids, decided = _draw_among_candidates(xp, logits, columns)
    undecided = [row for row, ok in enumerate(decided.tolist()) if not ok]
    if undecided:
        pick = lambda values: [values[row] for row in undecided]  # noqa: E731
        token_ids[undecided] = draw_sorted(xp, logits[undecided], pick(params), pick(uniforms))
    return token_ids


def draw_sorted(xp, logits: Array, params: Sequence[SamplingParams], uniforms: Sequence[float]) -> Array:
    """The same draw over rows sorted in full (the chain as it is defined): (S,) token ids."""
    c = _Columns(xp, device(logits), params, uniforms, logits.shape[-1])
    order = xp.argsort(logits, axis=-1, descending=True, stable=True)  # (S, vocab)
    ordered = xp.take_along_axis(logits, order, axis=-1)
    ranks = xp.arange(order.shape[-1], device=c.on)[None, :]
    keep = ranks < c.top_k
    probs = xp.exp(ordered - ordered[:, :1]) * xp.astype(keep, xp.float64)
    probs /= xp.sum(probs, axis=-1, keepdims=True)
    cut = _count_below(xp, xp.cumulative_sum(probs, axis=-1), c.top_p) + 1  # (S, 1)
    keep &= (ranks < cut) | (c.top_p >= 1.0)
    keep &= probs >= c.min_p * probs[:, :1]
    weights = _weights(xp, ordered, keep, c.temperature)
    cdf = xp.cumulative_sum(weights / xp.sum(weights, axis=-1, keepdims=True), axis=-1)
    picked = xp.minimum(_count_below(xp, cdf / cdf[:, -1:], c.uniform, inclusive=True), c.vocab - 1)
    return xp.take_along_axis(order, picked, axis=-1)[:, 0]


class _Columns:
    """The rows' parameters as (S, 1) columns on the logits' device."""

    def __init__(self, xp, on, params: Sequence[SamplingParams], uniforms: Sequence[float], vocab: int):
        self.xp, self.on, self.params, self.uniforms, self.vocab = xp, on, list(params), list(uniforms), vocab
        column = lambda values, dtype: xp.asarray(values, dtype=dtype, device=on)[:, None]  # noqa: E731
        self.top_k = column([p.top_k or vocab for p in self.params], xp.int64)
        self.top_p = column([p.top_p for p in self.params], xp.float64)
        self.min_p = column([p.min_p for p in self.params], xp.float64)
        self.temperature = column([p.temperature for p in self.params], xp.float64)
        self.uniform = column(self.uniforms, xp.float64)


def _draw_among_candidates(xp, logits: Array, c: _Columns) -> tuple[Array, Array]:
    """(S,) token ids and (S,) whether each row's draw was decided among its candidates."""
    vocab = logits.shape[-1]
    order, ordered, known = _candidates(xp, logits, min(CANDIDATES, vocab))  # (S, C) x2, (S, 1)
    peak = ordered[:, :1]
    ranks = xp.arange(order.shape[-1], device=c.on)[None, :]
    in_top_k = ranks < c.top_k
    exp_prefix = xp.exp(ordered - peak) * xp.astype(in_top_k, xp.float64)
    mass = xp.sum(exp_prefix, axis=-1, keepdims=True)  # (S, 1)
    whole_row = c.top_k >= vocab
    if bool(xp.any(whole_row)):  # top-k off: the softmax mass of the whole row, unsorted
        mass = xp.where(whole_row, softmax_mass(xp, logits, peak), mass)
    probs = exp_prefix / mass
    cut = _count_below(xp, xp.cumulative_sum(probs, axis=-1), c.top_p) + 1
    nucleus = c.top_p < 1.0
    keep = in_top_k & ((ranks < cut) | ~nucleus) & (probs >= c.min_p * probs[:, :1])
    confined = (c.top_k <= known) | (nucleus & (cut <= known))  # nothing kept past the prefix
    weights = _weights(xp, ordered, keep, c.temperature)
    total = xp.sum(weights, axis=-1, keepdims=True)
    if not bool(xp.all(confined)):  # min-p alone keeps tokens past the prefix: their weight too
        total = xp.where(confined, total, _row_weight(xp, logits, peak, c))
    cdf = xp.cumulative_sum(weights / total, axis=-1)
    picked = _count_below(xp, cdf, c.uniform, inclusive=True)  # (S, 1)
    decided = (whole_row | (c.top_k <= known)) & (~nucleus | (cut <= known)) & (picked < known)
    picked = xp.minimum(picked, order.shape[-1] - 1)
    return xp.take_along_axis(order, picked, axis=-1)[:, 0], decided[:, 0]


def _candidates(xp, logits: Array, count: int) -> tuple[Array, Array, Array]:
    """Each row's `count` highest logits, in the full stable sort's order: (S, count) ids, their
    (S, count) logits, and (S, 1) how many leading positions are certainly those of the full sort
    (all but the ones tied with the lowest candidate, whose equals outside may come first)."""
    if is_numpy_array(logits):
        ids = np.argpartition(-logits, count - 1, axis=-1)[:, :count] if count < logits.shape[-1] else None
        ids = np.broadcast_to(np.arange(count), logits.shape).copy() if ids is None else ids
    else:
        ids = logits.topk(count, dim=-1, sorted=False).indices
    ids = xp.sort(ids, axis=-1)  # by id, so that the stable sort below breaks ties by id
    order = xp.argsort(xp.take_along_axis(logits, ids, axis=-1), axis=-1, descending=True, stable=True)
    order = xp.take_along_axis(ids, order, axis=-1)
    ordered = xp.take_along_axis(logits, order, axis=-1)
    if count == logits.shape[-1]:
        known = xp.full((order.shape[0], 1), count, dtype=xp.int64, device=device(logits))
        return order, ordered, known
    above = ordered > ordered[:, -1:]
    return order, ordered, xp.sum(xp.astype(above, xp.int64), axis=-1, keepdims=True)


def _row_weight(xp, logits: Array, peak: Array, c: _Columns) -> Array:
    """(S, 1) the temperature-scaled weight of every token min-p keeps, over the unsorted row."""
    kept = xp.exp(logits - peak) >= c.min_p
    scaled = xp.where(kept, logits / c.temperature, -xp.inf)
    return xp.sum(xp.exp(scaled - peak / c.temperature), axis=-1, keepdims=True)


def _weights(xp, ordered: Array, keep: Array, temperature: Array) -> Array:
    """(S, n) exp of the kept logits over the temperature, relative to the best one's."""
    scaled = xp.where(keep, ordered / temperature, -xp.inf)
    return xp.exp(scaled - scaled[:, :1])


def _count_below(xp, rising: Array, bound: Array, inclusive: bool = False) -> Array:
    """rising (S, n) non-decreasing rows, bound (S, 1) -> (S, 1) how many entries of each row lie
    below its bound (at or below when inclusive): where the bound would be inserted, as
    searchsorted's left (right) side gives it."""
    below = rising <= bound if inclusive else rising < bound
    return xp.sum(xp.astype(below, xp.int64), axis=-1, keepdims=True)

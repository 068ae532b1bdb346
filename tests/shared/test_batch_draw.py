"""The draw decided among each row's best tokens gives the token the full sort gives, on both
backends, for every mix of top-k, top-p and min-p; and it does decide peaked rows without a sort."""

import numpy as np
import pytest
import torch
from array_api_compat import array_namespace

from shared import batch_draw
from shared.batch_draw import draw, draw_sorted
from shared.sampling import SamplingParams

VOCAB = 400
PARAMS = [
    SamplingParams(temperature=1.0),
    SamplingParams(temperature=0.7, top_k=5),
    SamplingParams(temperature=1.2, top_k=40),  # top-k past a small candidate set
    SamplingParams(temperature=0.9, top_p=0.5),
    SamplingParams(temperature=1.0, top_p=0.95),
    SamplingParams(temperature=1.0, min_p=0.1),
    SamplingParams(temperature=0.5, min_p=0.01),
    SamplingParams(temperature=1.5, top_k=20, top_p=0.8, min_p=0.05),
]


def _rows(scale: float, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    logits = (torch.randn(len(PARAMS), VOCAB, generator=generator, dtype=torch.float64) * scale).round(
        decimals=1
    )  # (R, vocab): rounded, so that ties occur, at the candidates' edge too
    logits[:, 17] = float("-inf")  # a token a grammar forbids
    return logits


@pytest.mark.parametrize("backend", [lambda t: t, lambda t: t.numpy()], ids=["torch", "numpy"])
@pytest.mark.parametrize("candidates", [8, 256])
@pytest.mark.parametrize("scale", [0.5, 3.0, 8.0])  # flat to peaked
def test_the_candidates_draw_equals_the_full_sort(backend, candidates, scale, monkeypatch):
    monkeypatch.setattr(batch_draw, "CANDIDATES", candidates)
    rng = np.random.default_rng(0)
    for seed in range(25):
        logits = backend(_rows(scale, seed))
        xp = array_namespace(logits)
        uniforms = rng.random(len(PARAMS)).tolist()
        got = draw(xp, logits, PARAMS, uniforms)
        want = draw_sorted(xp, logits, PARAMS, uniforms)
        assert got.tolist() == want.tolist(), f"seed {seed}"


def test_peaked_rows_are_decided_among_the_candidates(monkeypatch):
    sorted_rows = []
    full_sort = batch_draw.draw_sorted
    monkeypatch.setattr(
        batch_draw,
        "draw_sorted",
        lambda xp, rows, *a: sorted_rows.append(len(rows)) or full_sort(xp, rows, *a),
    )
    logits = _rows(8.0, 1)
    params = [p for p in PARAMS if p.top_k <= batch_draw.CANDIDATES]
    draw(array_namespace(logits), logits[: len(params)], params, [0.5] * len(params))
    assert sorted_rows == []
    flat = torch.zeros(1, VOCAB, dtype=torch.float64)  # every token as likely: decided past any prefix
    draw(array_namespace(flat), flat, [SamplingParams(temperature=1.0)], [0.9])
    assert sorted_rows == [1]

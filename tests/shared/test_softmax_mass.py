import numpy as np
import torch
from array_api_compat import array_namespace

from shared.softmax_mass import softmax_mass


def _rows() -> np.ndarray:
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((3, 49152)) * 6.0  # (3, vocab) float64
    logits[1, ::3] = -np.inf  # a grammar mask
    logits[2, :10] += 60.0  # a peaked row: most terms underflow
    return logits


def test_numpy_rows_match_the_float64_reference():
    logits = _rows()
    peak = logits.max(axis=-1, keepdims=True)
    expected = np.exp(logits - peak).sum(axis=-1, keepdims=True)
    mass = softmax_mass(array_namespace(logits), logits, peak)
    assert mass.shape == (3, 1) and mass.dtype == np.float64
    np.testing.assert_allclose(mass, expected, rtol=1e-13, atol=0)


def test_torch_tensors_keep_torch_arithmetic():
    logits = torch.from_numpy(_rows())
    peak = logits.max(dim=-1, keepdim=True).values
    mass = softmax_mass(array_namespace(logits), logits, peak)
    assert isinstance(mass, torch.Tensor)
    assert torch.equal(mass, torch.exp(logits - peak).sum(dim=-1, keepdim=True))

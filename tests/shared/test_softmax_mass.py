import numba
import numpy as np
import torch
from array_api_compat import array_namespace

from shared.softmax_mass import _exp_of_nonpositive, softmax_mass


@numba.njit
def _exps(values, out):
    for i in range(values.shape[0]):
        out[i] = _exp_of_nonpositive(values[i])


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


def test_the_vectorized_exp_is_within_two_ulp_of_numpys():
    rng = np.random.default_rng(3)
    values = np.concatenate([-rng.uniform(0, 708, 200_000), -rng.exponential(1e-3, 10_000), [0.0, -0.0]])
    got = np.empty_like(values)
    _exps(values, got)
    np.testing.assert_allclose(got, np.exp(values), rtol=4.5e-16, atol=0)
    edges = np.array([-708.5, -1e4, -np.inf, np.nan])
    _exps(edges, got[:4])
    assert got[:3].tolist() == [0.0, 0.0, 0.0] and np.isnan(got[3])

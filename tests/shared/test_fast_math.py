"""fast_exp against float64 exp: within 5 ulp of float32 over its range, clamped outside it."""

import numpy as np
from numba import njit

from shared.fast_math import EXP_HIGHEST, EXP_LOWEST, fast_exp


@njit(fastmath={"reassoc", "contract", "nsz", "arcp"})  # the flags of the kernels that use it
def _exp_all(x, out):
    for i in range(x.size):
        out[i] = fast_exp(x[i])


def _fast_exp(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    _exp_all(x, out)
    return out


def test_within_five_ulp_over_the_range():
    x = np.concatenate([np.linspace(EXP_LOWEST, EXP_HIGHEST, 400_001), np.linspace(-1, 1, 20_001)])
    x = x.astype(np.float32)
    exact = np.exp(x.astype(np.float64))
    ulp = np.spacing(exact.astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(_fast_exp(x) - exact) / ulp) <= 5
    assert _fast_exp(np.zeros(1, np.float32))[0] == 1.0


def test_clamped_outside_the_range():
    out = _fast_exp(np.array([-1e30, -200.0, 100.0, 1e30], np.float32))
    low, high = np.exp(np.float64(np.float32(EXP_LOWEST))), np.exp(np.float64(np.float32(EXP_HIGHEST)))
    np.testing.assert_allclose(out, [low, low, high, high], rtol=1e-6)
    assert np.all(np.isfinite(out))

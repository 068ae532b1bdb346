"""The CPU kernels of the layer's elementwise parts against their torch formulations: RMSNorm
with and without the fused residual add, and SiLU-and-multiply."""

import pytest
import torch

from cloud.layers.activation import silu_and_mul, silu_and_mul_torch
from cloud.layers.rms_norm import rms_norm, rms_norm_torch

EPS = 1e-5


def _inputs(dtype, rows=7, width=96):
    generator = torch.Generator().manual_seed(3)
    x = (torch.randn(rows, width, generator=generator) * 3).to(dtype)
    residual = torch.randn(rows, width, generator=generator).to(dtype)
    weight = (torch.rand(width, generator=generator) + 0.5).to(dtype)
    return x, residual, weight


def _assert_close(actual, expected, dtype):
    """float32: to rounding; bfloat16: at most one unit in the last place (float32 sums in
    another order, another exp)."""
    if dtype == torch.float32:
        torch.testing.assert_close(actual, expected, rtol=1e-6, atol=1e-6)
    else:
        ulp = (expected.float().abs() * 2**-7).clamp_min(2**-126)
        assert torch.all((actual.float() - expected.float()).abs() <= ulp)
        assert (actual == expected).float().mean() > 0.98  # almost all bit for bit


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_equals_torch(dtype):
    x, _, weight = _inputs(dtype)
    _assert_close(rms_norm(x, weight, EPS), rms_norm_torch(x, weight, EPS), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fused_add_updates_the_residual_in_place_then_normalizes(dtype):
    x, residual, weight = _inputs(dtype)
    expected_sum = residual + x  # rounded to dtype, as the unfused model adds
    expected = rms_norm_torch(expected_sum, weight, EPS)
    storage = residual.data_ptr()
    out = rms_norm(x, weight, EPS, residual=residual)
    assert residual.data_ptr() == storage and torch.equal(residual, expected_sum)
    _assert_close(out, expected, dtype)


def test_other_dtypes_take_the_torch_path():
    x, residual, weight = _inputs(torch.float16)
    expected_sum = residual + x
    out = rms_norm(x, weight, EPS, residual=residual)
    assert torch.equal(residual, expected_sum) and torch.equal(out, rms_norm_torch(expected_sum, weight, EPS))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_silu_and_mul_equals_torch(dtype):
    gate_up = torch.cat(_inputs(dtype, width=48)[:2], dim=-1)  # (7, 96): gate, then up
    out = silu_and_mul(gate_up)
    assert out.shape == (7, 48) and out.dtype == dtype
    _assert_close(out, silu_and_mul_torch(gate_up), dtype)

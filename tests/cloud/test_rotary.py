"""The in-place rotary kernel against the torch formulation: bit for bit in float32, and in
bfloat16 equal to the float32 rotation of the same inputs rounded once."""

import dataclasses

import pytest
import torch

from cloud.layers.rotary import RotaryEmbedding
from formats.model_config import ModelConfig

BASE = ModelConfig(
    arch="llama",
    num_layers=1,
    hidden_size=64,
    ffn_size=128,
    num_heads=4,
    num_kv_heads=2,
    head_dim=16,
    rope_dim=16,
    rope_theta=10000.0,
    rope_scale=1.0,
    rms_eps=1e-5,
    context_length=256,
    vocab_size=32,
)
CASES = {
    "llama pairs": BASE,
    "neox halves": dataclasses.replace(BASE, arch="qwen2"),
    "partial rotary": dataclasses.replace(BASE, arch="phi3", rope_dim=8),
}


def _inputs(dtype):
    generator = torch.Generator().manual_seed(0)
    positions = torch.tensor([0, 1, 7, 100, 255, 31])
    qkv = torch.randn(len(positions), (4 + 2 + 2) * 16, generator=generator).to(dtype)
    q, k, _ = qkv.split([64, 32, 32], dim=-1)  # views with the row stride of the fused matmul
    return positions, q.view(-1, 4, 16), k.view(-1, 2, 16)


def _reference(config, positions, x, dtype):
    """The torch path in float32 on the (rounded) inputs, rounded once to dtype."""
    rotary = RotaryEmbedding(config, torch.device("cpu"), torch.float16)  # float16: torch path
    cos, sin = rotary.tables(positions, torch.float32)
    return rotary.rotate_torch(x.float(), cos, sin).to(dtype)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_kernel_equals_the_torch_rotation(case, dtype):
    config = CASES[case]
    positions, q, k = _inputs(dtype)
    expected_q, expected_k = (_reference(config, positions, x, dtype) for x in (q, k))
    rotary = RotaryEmbedding(config, torch.device("cpu"), dtype)
    assert rotary.in_place
    rotated_q, rotated_k = rotary.rotate(q, k, rotary.tables(positions, dtype))
    assert rotated_q.data_ptr() == q.data_ptr()  # in place, in the fused matmul's output
    assert torch.equal(rotated_q, expected_q) and torch.equal(rotated_k, expected_k)
    if config.rope_dim < config.head_dim:  # the dimensions past the rotary part are untouched
        assert torch.equal(rotated_q[..., 8:], _inputs(dtype)[1][..., 8:])


def test_position_zero_is_the_identity():
    positions, q, k = _inputs(torch.float32)
    rotary = RotaryEmbedding(BASE, torch.device("cpu"), torch.float32)
    original = q[0].clone()
    rotary.rotate(q, k, rotary.tables(positions, torch.float32))
    assert torch.equal(q[0], original)

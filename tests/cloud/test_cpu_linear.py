"""Packed oneDNN linears equal F.linear: bit for bit in bfloat16, to float32 rounding in float32."""

import pytest
import torch
import torch.nn.functional as F

from cloud.layers.linear import PackedLinearWeight, can_pack
from cloud.models.llama import LlamaModel


@pytest.mark.parametrize("rows", [1, 3, 16, 17, 100])
def test_packed_bfloat16_is_bit_identical_with_and_without_bias(rows):
    """Where oneDNN has bfloat16 kernels (a CPU with AVX-512); elsewhere packing is refused."""
    generator = torch.Generator().manual_seed(rows)
    weight = torch.randn(96, 64, generator=generator).bfloat16()
    bias = torch.randn(96, generator=generator).bfloat16()
    x = torch.randn(rows, 64, generator=generator).bfloat16()
    if not can_pack(torch.bfloat16, torch.device("cpu")):
        with pytest.raises(RuntimeError):
            PackedLinearWeight(weight)(x)
        return
    assert torch.equal(PackedLinearWeight(weight)(x), F.linear(x, weight))
    assert torch.equal(PackedLinearWeight(weight, bias)(x), F.linear(x, weight, bias))


def test_packed_float32_agrees_to_rounding():
    generator = torch.Generator().manual_seed(0)
    weight, x = torch.randn(300, 576, generator=generator), torch.randn(16, 576, generator=generator)
    torch.testing.assert_close(PackedLinearWeight(weight)(x), F.linear(x, weight), rtol=1e-5, atol=1e-4)


def test_packing_is_chosen_only_where_it_runs():
    cpu = torch.device("cpu")
    assert can_pack(torch.float32, cpu)  # the CPU build of torch has oneDNN
    assert not can_pack(torch.float16, cpu) and not can_pack(torch.bfloat16, torch.device("cuda"))


def test_a_packed_model_keeps_no_plain_copy_of_its_matmul_weights(tiny_model_tensors):
    config, tensors = tiny_model_tensors
    model = LlamaModel(config, dict(tensors))
    assert all(isinstance(linear, PackedLinearWeight) for linear in model.linears.values())
    assert not any(name.endswith(("attn_qkv.weight", "ffn_down.weight")) for name in model.tensors)


@pytest.fixture
def tiny_model_tensors(tiny_llama_gguf):
    from cloud.models.weights import load_weights

    config, tensors, _ = load_weights(tiny_llama_gguf, torch.float32, torch.device("cpu"))
    return config, tensors

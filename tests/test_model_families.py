"""Model families beyond Llama, end to end: a tiny checkpoint written by the installed
transformers, converted by `hybridgw convert`, run by both engines: greedy tokens equal
transformers' (float32 weights; the edge keeps its KV cache in float16, as llama.cpp does)."""

import numpy as np
import pytest
import torch
import transformers

from cloud import LLM, SamplingParams
from edge.engine import EdgeEngine, EngineConfig
from formats.convert_gguf import gguf_to_safetensors
from formats.convert_hf import convert_hf_to_gguf
from formats.errors import ConversionError, UnsupportedModelError
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader
from shared.engine import EngineRequest
from tests.fixtures.hf_checkpoints import write_hf_checkpoint

PROMPTS = [[5, 17, 200, 33], [91, 250, 7, 8, 9, 10, 11, 12, 13], [300, 2, 301, 44, 45]]
NUM_TOKENS = 12
GREEDY = SamplingParams(temperature=0, max_tokens=NUM_TOKENS, ignore_eos=True)


# family -> (GGUF architecture, what its conversion must carry)
FAMILIES = {
    "qwen3": ("qwen3", ("blk.0.attn_q_norm.weight", "blk.1.attn_k_norm.weight")),
    "llama3": ("llama", ("rope_freqs.weight",)),
    "phi3": ("phi3", ("blk.0.attn_qkv.weight", "blk.1.ffn_up.weight")),  # fused, as llama.cpp keeps them
    "smollm2": ("llama", ("token_embd.weight",)),  # the demo model's shape: tied embeddings, 9/3 heads
    "gemma3": (
        "gemma3",
        ("blk.0.post_attention_norm.weight", "blk.5.post_ffw_norm.weight", "blk.3.attn_k_norm.weight"),
    ),
}
ONNX_RUNS = {"llama3", "smollm2"}  # the others need what its graph lacks


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"hf-{request.param}")
    model, _ = write_hf_checkpoint(directory, request.param, weight_scale=4.0)
    gguf_path = directory / "model.f32.gguf"
    convert_hf_to_gguf(directory, gguf_path, GGMLType.F32, progress=False)
    expected = [_transformers_greedy(model, prompt) for prompt in PROMPTS]
    return request.param, model, directory, gguf_path, expected


def _transformers_greedy(model, prompt: list[int]) -> list[int]:
    """The argmax of the model's full forward, token by token: what the engines' ignore_eos means
    (generate's min_new_tokens would mask the end-of-sequence token instead of letting it win)."""
    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(NUM_TOKENS):
            tokens.append(int(model(torch.tensor([tokens])).logits[0, -1].argmax()))
    return tokens[len(prompt) :]


def test_the_conversion_keeps_what_the_family_needs(family):
    name, model, _, gguf_path, _ = family
    arch, tensors = FAMILIES[name]
    reader = GGUFReader(gguf_path)
    assert reader.get("general.architecture") == arch and all(t in reader.tensors for t in tensors)
    heads, hidden = model.config.num_attention_heads, model.config.hidden_size
    head_dim = getattr(model.config, "head_dim", None) or hidden // heads
    if head_dim * heads != hidden:
        assert reader.get(f"{arch}.attention.key_length") == head_dim
    if name == "phi3":  # half of each head rotates
        assert reader.get("phi3.rope.dimension_count") == head_dim // 2
    if name == "llama3":  # the divisors transformers applies to each rotary frequency
        inv_freq, _ = transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS["llama3"](model.config, "cpu")
        default = 100000.0 ** -(torch.arange(0, 16, 2, dtype=torch.float64) / 16)
        expected = (default / inv_freq.double()).float().numpy()
        np.testing.assert_allclose(reader.tensor("rope_freqs.weight").data, expected, rtol=1e-5)
    if name == "gemma3":
        _assert_gemma_conversion(model, reader)


def _assert_gemma_conversion(model, reader: GGUFReader) -> None:
    """llama.cpp's form: norm weights with the 1 added, its keys, its default window pattern."""
    layer = model.model.layers[2]
    norms = {"attn_norm": layer.input_layernorm, "post_ffw_norm": layer.post_feedforward_layernorm}
    norms |= {"attn_q_norm": layer.self_attn.q_norm, "ffn_norm": layer.pre_feedforward_layernorm}
    for gguf_name, norm in norms.items():
        np.testing.assert_array_equal(
            reader.tensor(f"blk.2.{gguf_name}.weight").data, norm.weight.detach().numpy() + 1
        )
    config = model.config
    assert reader.get("gemma3.attention.sliding_window") == config.sliding_window
    assert "gemma3.attention.sliding_window_pattern" not in reader.fields  # every sixth: llama.cpp's own
    assert reader.get("gemma3.rope.freq_base_swa") == 10000.0 and reader.get("gemma3.rope.freq_base") == 1e6
    assert reader.get("gemma3.rope.scaling.factor") == 8.0
    assert reader.get("gemma3.attention.scale") == np.float32(config.query_pre_attn_scalar**-0.5)
    assert reader.get("gemma3.final_logit_softcapping") == config.final_logit_softcapping


@pytest.mark.parametrize("source", ["gguf", "safetensors"])
def test_the_cloud_engine_equals_transformers(family, source):
    _, _, directory, gguf_path, expected = family
    source_path = str(gguf_path if source == "gguf" else directory)
    llm = LLM(source_path, dtype="float32", num_blocks=64, block_size=4)  # transformers' dtype
    assert [o.token_ids for o in llm.generate(PROMPTS, GREEDY)] == expected


def test_the_edge_engine_equals_transformers(family):
    _, _, _, gguf_path, expected = family
    engine = EdgeEngine(EngineConfig(str(gguf_path), num_slots=3, context_size=3 * 64, num_threads=2))
    assert _edge_greedy(engine) == expected


def _edge_greedy(engine: EdgeEngine) -> list[list[int]]:
    for i, prompt in enumerate(PROMPTS):
        engine.add(EngineRequest(str(i), prompt, GREEDY))
    tokens: dict[str, list[int]] = {}
    while engine.has_work():
        for output in engine.step().outputs:
            tokens.setdefault(output.request_id, []).append(output.token.token_id)
    return [tokens[str(i)] for i in range(len(PROMPTS))]


def test_the_gguf_exports_back_to_an_identical_checkpoint(family, tmp_path):
    name, model, _, gguf_path, _ = family
    if name in ("phi3", "gemma3"):
        with pytest.raises(ConversionError, match=f"cannot convert architecture '{name}'"):
            gguf_to_safetensors(gguf_path, tmp_path / "back", progress=False)
        return
    if name == "llama3":
        with pytest.raises(ConversionError, match="rope_freqs"):
            gguf_to_safetensors(gguf_path, tmp_path / "back", progress=False)
        return
    gguf_to_safetensors(gguf_path, tmp_path / "back", progress=False)
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "back").eval()
    ids = torch.tensor([PROMPTS[1]])
    with torch.no_grad():
        assert torch.equal(reloaded(ids).logits, model(ids).logits)


def test_the_onnxruntime_backend_runs_or_refuses_by_name(family):
    name, _, _, gguf_path, expected = family
    config = EngineConfig(
        str(gguf_path), num_slots=3, context_size=3 * 64, num_threads=2, backend="onnxruntime"
    )
    if name not in ONNX_RUNS:  # per-head norms, head size or partial rotary: not in its graph
        with pytest.raises(UnsupportedModelError, match="use the numba backend"):
            EdgeEngine(config)
        return
    assert _edge_greedy(EdgeEngine(config)) == expected  # the rope factors are in its frequencies

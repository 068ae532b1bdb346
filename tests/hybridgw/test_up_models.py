"""`hybridgw up --model [NAME=]FILE.gguf`: any files, each on its own edge node."""

import pytest
import requests

from formats.ggml_types import GGMLType
from tests.fixtures.cli import run_hybridgw
from tests.hybridgw.test_up import Up


@pytest.mark.integration
def test_up_serves_every_model_it_is_given(tiny_model):
    named, plain = tiny_model(GGMLType.Q8_0), tiny_model(GGMLType.Q4_0)
    up = Up(
        "--port", "0", "--no-cloud", "--edge-slots", "1", "--model", f"tiny-a={named}", "--model", str(plain)
    )
    try:
        url = up.wait_listening()
        up.wait_ready(url)
        listed = {model["id"] for model in requests.get(f"{url}/v1/models", timeout=10).json()["data"]}
        assert listed == {"tiny-a", plain.stem.lower()}
        nodes = {}
        for model in sorted(listed):
            body = {"model": model, "prompt": "hello", "max_tokens": 2, "temperature": 0}
            answer = requests.post(f"{url}/v1/completions", json=body, timeout=60)
            assert answer.status_code == 200 and answer.json()["usage"]["completion_tokens"] == 2
            nodes[model] = answer.headers["X-Hybridgw-Node"]
        assert nodes == {"tiny-a": "edge-local", plain.stem.lower(): f"edge-{plain.stem.lower()}"}
    finally:
        assert up.stop() == 0


@pytest.mark.integration
def test_up_refuses_a_model_it_cannot_serve_before_starting_anything(tiny_model, tmp_path):
    result = run_hybridgw("up", "--port", "0", "--model", str(tmp_path / "absent.gguf"), timeout=120)
    assert result.returncode == 1 and "--model" in result.stderr and "Traceback" not in result.stderr
    assert "starting the edge node" not in result.stderr
    twice = str(tiny_model(GGMLType.Q8_0))
    result = run_hybridgw("up", "--port", "0", "--model", f"a={twice}", "--model", f"a={twice}", timeout=120)
    assert result.returncode == 1 and "given twice" in result.stderr

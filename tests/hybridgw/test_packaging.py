"""The gateway and the edge must import and run without torch (small edge boxes and images)."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_edge_and_gateway_roles_never_import_torch():
    code = (
        "import sys, gateway, edge.engine, shared.inference_server, shared.async_engine, formats, "
        "hybridgw.main, "
        "formats.tokenizer, formats.chat_template, "
        "formats.quantize_model, formats.convert_hf, formats.convert_gguf, formats.model_pull\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_torch_is_only_a_cloud_dependency_and_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(dep.startswith("torch") for dep in project["dependencies"])
    assert not any(dep.startswith("torch") for dep in project["optional-dependencies"]["edge"])
    assert project["optional-dependencies"]["cloud"] == ["torch==2.13.0"]
    assert project["scripts"]["hybridgw"] == "hybridgw.main:main"

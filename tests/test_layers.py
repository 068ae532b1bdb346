"""The import layers of pyproject.toml's [tool.importlinter] hold: formats <- shared <- edge,
cloud, gateway (independent of one another) <- the hybridgw CLI; inside cloud/, worker | engine <-
models <- layers <- kernels; no import cycles."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"


def test_the_layer_contract_is_kept():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "3 kept, 0 broken" in result.stdout

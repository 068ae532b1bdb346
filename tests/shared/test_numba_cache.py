"""The numba cache directory follows the compiled sources: an edit to any of them starts a fresh
cache (numba alone keys an entry on its own file only), an edit elsewhere keeps the warm one."""

import shutil
from pathlib import Path

import numba
import pytest

from shared import numba_cache


def copy_packages(destination: Path) -> None:
    for package in numba_cache.COMPILED_PACKAGES:
        shutil.copytree(
            numba_cache.PACKAGE_ROOT / package,
            destination / package,
            ignore=shutil.ignore_patterns("__pycache__"),
        )


def test_digest_changes_with_a_compiled_source_only(tmp_path):
    copy_packages(tmp_path)
    before = numba_cache.compiled_sources_digest(tmp_path)
    (tmp_path / "shared" / "not_compiled.py").write_text("VALUE = 1\n")
    assert numba_cache.compiled_sources_digest.__wrapped__(tmp_path) == before
    inlined = tmp_path / "edge" / "kernels" / "f16_table.py"
    inlined.write_text(inlined.read_text() + "\n# an edit\n")
    assert numba_cache.compiled_sources_digest.__wrapped__(tmp_path) != before


def test_sources_are_the_modules_that_use_numba():
    sources = {str(p.relative_to(numba_cache.PACKAGE_ROOT)) for p in numba_cache.compiled_sources()}
    assert {"edge/kernels/decode_layer.py", "shared/softmax_mass.py", "edge/kv_cache.py"} <= sources
    assert "gateway/http/app.py" not in sources and "shared/sampling.py" not in sources


def test_kernels_cache_under_the_digest(monkeypatch, tmp_path):
    import edge.kernels.layers as layers

    assert str(numba_cache.kernel_cache_dir()) == numba.config.CACHE_DIR
    assert Path(layers.rms_norm.stats.cache_path).is_relative_to(numba_cache.kernel_cache_dir())
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert numba_cache.kernel_cache_dir() == tmp_path / numba_cache.compiled_sources_digest()
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("HYBRIDGW_HOME", str(tmp_path / "home"))
    assert numba_cache.cache_base() == tmp_path / "home" / "numba"


RACE = """
import sys
from numba.core import caching
from shared.numba_cache import serialize_cache_writes
if sys.argv[3] == "locked":
    serialize_cache_writes()
cache = caching.IndexDataCacheFile(sys.argv[1], "race", ("stamp", 1))
for i in range(150):
    cache.save((sys.argv[2], i), f"{sys.argv[2]}-{i}")
"""


def race(directory: Path, mode: str) -> list[str]:
    """Two processes saving different keys of one function's cache at once: the keys whose
    entry does not hold what was saved for them."""
    import subprocess
    import sys

    from numba.core import caching

    writers = [
        subprocess.Popen([sys.executable, "-c", RACE, str(directory), name, mode]) for name in ("a", "b")
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    cache = caching.IndexDataCacheFile(str(directory), "race", ("stamp", 1))
    keys = [(name, i) for name in ("a", "b") for i in range(150)]
    return [key for key in keys if cache.load(key) != f"{key[0]}-{key[1]}"]


@pytest.mark.integration
def test_processes_saving_one_functions_signatures_at_once_keep_each_its_own(tmp_path):
    """numba alone numbers the data files unlocked: two processes can take one number, and a
    signature's entry then holds the other's code (seen: a gated kernel computing zeros)."""
    assert race(tmp_path, "locked") == []

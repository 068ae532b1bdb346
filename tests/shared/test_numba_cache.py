"""The numba cache directory follows the compiled sources: an edit to any of them starts a fresh
cache (numba alone keys an entry on its own file only), an edit elsewhere keeps the warm one."""

import shutil
from pathlib import Path

import numba

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
    assert "gateway/app.py" not in sources and "shared/sampling.py" not in sources


def test_kernels_cache_under_the_digest(monkeypatch, tmp_path):
    import edge.kernels.layers as layers

    assert str(numba_cache.kernel_cache_dir()) == numba.config.CACHE_DIR
    assert Path(layers.rms_norm.stats.cache_path).is_relative_to(numba_cache.kernel_cache_dir())
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert numba_cache.kernel_cache_dir() == tmp_path / numba_cache.compiled_sources_digest()
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("HYBRIDGW_HOME", str(tmp_path / "home"))
    assert numba_cache.cache_base() == tmp_path / "home" / "numba"

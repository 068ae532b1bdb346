"""One numba cache directory per version of the compiled sources.

numba keys a cached function on its own file's timestamp only. After an edit to a kernel that
another file inlines or calls, the caller's cache entry still loads, with the old callee compiled
into it (a stale entry once made the decode tests divide by zero). Every module that compiles with
`cache=True` calls `use_kernel_cache()` before its first decorator: the cache then lives under a
digest of every source numba compiles, so any such edit starts a fresh cache, and an unchanged
checkout keeps its warm one.

It also loads numba's array registries without their BLAS probe: `numba.np.arraymath` imports
scipy.linalg (0.4 s, 30 MiB) only to learn whether `np.dot` may be compiled, and no kernel of ours
calls BLAS from numba; without the probe a cached kernel's first call starts that much sooner.

The base is `$NUMBA_CACHE_DIR` when set (the Docker image warms one at build time), else
`$HYBRIDGW_HOME/numba`, else `$XDG_CACHE_HOME/hybridgw/numba` or ~/.cache/hybridgw/numba.
"""

import fcntl
import functools
import hashlib
import os
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
COMPILED_PACKAGES = ("edge", "cloud", "shared")


def compiled_sources(root: Path = PACKAGE_ROOT) -> list[Path]:
    """Every module of the compiled packages that uses numba, in a stable order."""
    sources = []
    for package in COMPILED_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if b"numba" in path.read_bytes():
                sources.append(path)
    return sources


@functools.cache
def compiled_sources_digest(root: Path = PACKAGE_ROOT) -> str:
    digest = hashlib.sha256()
    for path in compiled_sources(root):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_base() -> Path:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    if os.environ.get("HYBRIDGW_HOME"):
        return Path(os.environ["HYBRIDGW_HOME"]) / "numba"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hybridgw" / "numba"


def kernel_cache_dir() -> Path:
    return cache_base() / compiled_sources_digest()


def use_kernel_cache() -> None:
    """Point numba's cache at this version's directory (decorators read it when they run)."""
    import numba

    numba.config.CACHE_DIR = str(kernel_cache_dir())
    load_registries_without_blas_probe()
    serialize_cache_writes()


def serialize_cache_writes() -> None:
    """Saves to numba's cache, one process at a time per function.

    numba numbers a function's compiled signatures' files by reading the function's index,
    taking the first free number and writing the index back, without a lock. Two processes that
    save different signatures of one function at once (a node and its background compiler,
    edge/background_kernels.py, or a test beside a node) can both take number n: the index then
    names one signature's file for the other's code, and a later start runs a kernel compiled
    for other types (it computed zeros). Each save holds an exclusive lock on a file beside the
    index while it reads, numbers and writes."""
    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "serialized", False):
        return

    def locked_save(self, key, data):
        os.makedirs(self._cache_path, exist_ok=True)
        with open(f"{self._index_path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            save(self, key, data)

    locked_save.serialized = True
    caching.IndexDataCacheFile.save = locked_save


def load_registries_without_blas_probe() -> None:
    """Import numba's array implementations with scipy's BLAS hidden, so `np.dot` stays uncompiled.

    A process that has already imported scipy's BLAS keeps it (the probe then costs nothing)."""
    if "numba.np.arraymath" in sys.modules:
        return
    hidden = "scipy.linalg.cython_blas" not in sys.modules
    if hidden:
        sys.modules["scipy.linalg.cython_blas"] = None  # its import raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if hidden:
            del sys.modules["scipy.linalg.cython_blas"]

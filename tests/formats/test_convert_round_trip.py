"""GGUF -> safetensors -> GGUF gives back the same file contents; what config.json carries for
it is checked like any outside input."""

import json

import numpy as np
import pytest

from formats.carried_metadata import CARRIED_KEY, imported_metadata
from formats.convert_gguf import gguf_to_safetensors
from formats.convert_hf import convert_hf_to_gguf
from formats.errors import ConversionError
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else value


@pytest.mark.demo_model
@pytest.mark.slow  # converts the whole demo model twice: ~3.5 s
def test_the_demo_model_round_trips_with_the_same_metadata_and_tensors(demo_model_path, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    gguf_to_safetensors(demo_model_path, checkpoint, progress=False)
    back = tmp_path / "back.gguf"
    convert_hf_to_gguf(checkpoint, back, GGMLType.Q4_1, progress=False)
    original, converted = GGUFReader(demo_model_path), GGUFReader(back)
    fields = lambda reader: {  # noqa: E731
        key: (f.value_type, f.item_type, _plain(f.value)) for key, f in reader.fields.items()
    }
    assert fields(converted) == fields(original)
    assert converted.tensors.keys() == original.tensors.keys()
    for name, tensor in original.tensors.items():
        assert converted.tensors[name].ggml_type == tensor.ggml_type, name
        assert converted.tensors[name].data.tobytes() == tensor.data.tobytes(), name


@pytest.mark.parametrize(
    ("carried", "complaint"),
    [
        ([1, 2], "must be an object"),
        ({"tokenizer.ggml.pre": {"type": "STRING", "value": "x"}}, "cannot set"),
        ({"general.file_type": {"type": "UINT32", "value": 1}}, "cannot set"),
        ({"general.name": {"type": "NOPE", "value": "x"}}, "unknown type"),
        ({"general.name": {"type": "STRING", "value": 7}}, "not a valid STRING"),
        ({"general.count": {"type": "UINT8", "value": 300}}, "not a valid UINT8"),
        ({"general.flag": {"type": "BOOL", "value": 1}}, "not a valid BOOL"),
        ({"general.tags": {"type": "ARRAY", "item_type": "STRING", "value": "a"}}, "flat list"),
        ({"general.tags": {"type": "ARRAY", "item_type": "ARRAY", "value": []}}, "flat list"),
        ({"general.tags": {"type": "ARRAY", "item_type": "STRING", "value": ["a", 1]}}, "not a valid"),
        ({f"general.k{i}": {"type": "BOOL", "value": True} for i in range(65)}, "at most 64"),
    ],
)
def test_carried_metadata_is_checked_like_outside_input(carried, complaint):
    with pytest.raises(ConversionError, match=complaint):
        imported_metadata({CARRIED_KEY: carried})


def test_carried_metadata_keeps_each_fields_type():
    carried = {
        "general.name": {"type": "STRING", "item_type": None, "value": "demo"},
        "general.languages": {"type": "ARRAY", "item_type": "STRING", "value": ["en", "de"]},
        "general.size": {"type": "UINT64", "item_type": None, "value": 2**40},
    }
    fields = imported_metadata(json.loads(json.dumps({CARRIED_KEY: carried})))
    assert [(f.key, f.value_type.name, f.value) for f in fields] == [
        ("general.name", "STRING", "demo"),
        ("general.languages", "ARRAY", ["en", "de"]),
        ("general.size", "UINT64", 2**40),
    ]

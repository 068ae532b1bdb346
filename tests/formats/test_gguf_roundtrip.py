"""Writer -> reader round trips, and cross-reads with the reference `gguf` package."""

import gguf
import numpy as np
import pytest

from formats import quants
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_reader import GGUFReader
from formats.gguf_values import GGUFValueType
from formats.gguf_writer import GGUFWriter, copy_fields
from tests.fixtures.tiny_models import random_weight

SCALARS = [
    ("t.u8", 200, GGUFValueType.UINT8),
    ("t.i8", -100, GGUFValueType.INT8),
    ("t.u16", 60000, GGUFValueType.UINT16),
    ("t.i16", -30000, GGUFValueType.INT16),
    ("t.u32", 4_000_000_000, GGUFValueType.UINT32),
    ("t.i32", -2_000_000_000, GGUFValueType.INT32),
    ("t.f32", 0.5, GGUFValueType.FLOAT32),
    ("t.bool", True, GGUFValueType.BOOL),
    ("t.str", "héllo ✓ 世界", GGUFValueType.STRING),
    ("t.u64", 2**63 + 5, GGUFValueType.UINT64),
    ("t.i64", -(2**62), GGUFValueType.INT64),
    ("t.f64", 1.0 / 3.0, GGUFValueType.FLOAT64),
]
TENSOR_TYPES = [GGMLType.F32, GGMLType.F16, GGMLType.BF16, *quants.BLOCK_DEQUANTIZERS]


def _write_everything(path, alignment=32):
    writer = GGUFWriter(alignment=alignment)
    for key, value, value_type in SCALARS:
        writer.add_field(key, value, value_type)
    writer.add_array("t.arr_i32", [1, -2, 3], GGUFValueType.INT32)
    writer.add_array("t.arr_f32", [0.25, -1.5], GGUFValueType.FLOAT32)
    writer.add_array("t.arr_bool", [True, False, True], GGUFValueType.BOOL)
    writer.add_array("t.arr_str", ["a", "", "ü b"], GGUFValueType.STRING)
    writer.add_array("t.arr_empty", [], GGUFValueType.UINT8)
    rng = np.random.default_rng(1)
    expected = {}
    for ggml_type in TENSOR_TYPES:
        block = BLOCK_GEOMETRY[ggml_type].block_size
        shape = (3, 2 * max(block, 32))
        data = random_weight(rng, shape, ggml_type)
        writer.add_tensor(f"w.{ggml_type.name}", data, ggml_type, shape)
        expected[ggml_type] = (shape, data)
    writer.write(path)
    return expected


@pytest.mark.parametrize("alignment", [32, 64])
def test_every_value_and_tensor_type_round_trips(tmp_path, alignment):
    path = tmp_path / "all.gguf"
    expected = _write_everything(path, alignment)
    reader = GGUFReader(path)
    assert reader.version == 3
    assert reader.alignment == alignment
    for key, value, value_type in SCALARS:
        assert reader.fields[key].value_type == value_type
        assert reader.fields[key].value == value
    assert reader.fields["t.arr_i32"].item_type == GGUFValueType.INT32
    assert reader.get("t.arr_i32").tolist() == [1, -2, 3]
    assert reader.get("t.arr_f32").tolist() == [0.25, -1.5]
    assert reader.get("t.arr_bool").tolist() == [True, False, True]
    assert reader.get("t.arr_str") == ["a", "", "ü b"]
    assert reader.get("t.arr_empty").tolist() == []
    for ggml_type, (shape, data) in expected.items():
        tensor = reader.tensor(f"w.{ggml_type.name}")
        assert tensor.ggml_type == ggml_type
        assert tensor.shape == shape
        assert tensor.offset % alignment == 0
        assert tensor.data.tobytes() == np.ascontiguousarray(data).tobytes()


def test_tensor_data_is_a_zero_copy_view_of_the_file(tmp_path):
    path = tmp_path / "all.gguf"
    _write_everything(path)
    reader = GGUFReader(path)
    tensor = reader.tensor("w.Q4_0")
    assert not tensor.data.flags.writeable
    assert np.shares_memory(tensor.data, reader.buf)


def test_gguf_package_reads_our_files(tmp_path):
    path = tmp_path / "all.gguf"
    expected = _write_everything(path)
    reference = gguf.GGUFReader(path)
    assert reference.fields["t.str"].contents() == "héllo ✓ 世界"
    assert reference.fields["t.u64"].contents() == 2**63 + 5
    assert reference.fields["t.arr_str"].contents() == ["a", "", "ü b"]
    by_name = {t.name: t for t in reference.tensors}
    for ggml_type, (shape, data) in expected.items():
        tensor = by_name[f"w.{ggml_type.name}"]
        assert int(tensor.tensor_type) == int(ggml_type)
        assert tuple(int(d) for d in reversed(tensor.shape)) == shape
        assert np.asarray(tensor.data).tobytes() == np.ascontiguousarray(data).tobytes()


def test_we_read_files_the_gguf_package_writes(tmp_path):
    path = tmp_path / "ref.gguf"
    writer = gguf.GGUFWriter(path, arch="llama")
    writer.add_block_count(7)
    writer.add_token_list(["<s>", "a", "b"])
    q8 = quants.quantize(np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), GGMLType.Q8_0)
    writer.add_tensor("q8", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.add_tensor("f", np.arange(6, dtype=np.float32).reshape(2, 3))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    reader = GGUFReader(path)
    assert reader.get("general.architecture") == "llama"
    assert reader.get("llama.block_count") == 7
    assert reader.get("tokenizer.ggml.tokens") == ["<s>", "a", "b"]
    assert reader.tensor("q8").shape == (2, 32)
    assert reader.tensor("q8").data.tobytes() == q8.tobytes()
    assert reader.tensor("f").data.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_copy_fields_preserves_types(tmp_path):
    source = tmp_path / "a.gguf"
    _write_everything(source)
    reader = GGUFReader(source)
    writer = GGUFWriter()
    copy_fields(writer, reader.fields.values())
    copy = tmp_path / "b.gguf"
    writer.write(copy)
    copied = GGUFReader(copy)
    for key, field in reader.fields.items():
        assert copied.fields[key].value_type == field.value_type
        assert np.array_equal(np.asarray(copied.fields[key].value), np.asarray(field.value))

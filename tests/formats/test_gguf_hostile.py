"""Truncated, corrupted and hostile GGUF files: one typed error, never a crash or a hang."""

import contextlib
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formats import quants
from formats.errors import GGUFError
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader
from formats.gguf_values import GGUFValueType
from formats.gguf_writer import GGUFWriter


def _small_file() -> bytes:
    """A small but complete model-like file: strings, arrays, a quantized and a float tensor."""
    import tempfile
    from pathlib import Path

    writer = GGUFWriter()
    writer.add_string("general.architecture", "llama")
    writer.add_uint32("llama.block_count", 2)
    writer.add_array("tokenizer.ggml.tokens", ["<s>", "hello", "wörld"], GGUFValueType.STRING)
    writer.add_array("tokenizer.ggml.scores", [0.0, -1.0, -2.0], GGUFValueType.FLOAT32)
    weight = quants.quantize(np.ones((2, 32), dtype=np.float32), GGMLType.Q4_0)
    writer.add_tensor("blk.0.attn_q.weight", weight, GGMLType.Q4_0, (2, 32))
    writer.add_tensor("output_norm.weight", np.ones(8, dtype=np.float32), GGMLType.F32)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "small.gguf"
        writer.write(path)
        return path.read_bytes()


SMALL = _small_file()


def _read_bytes(tmp_path, data: bytes) -> GGUFReader:
    path = tmp_path / "case.gguf"
    path.write_bytes(data)
    return GGUFReader(path)


def _touch_everything(reader: GGUFReader) -> None:
    for tensor in reader.tensors.values():
        tensor.data.sum()  # every byte of every view lies inside the file


def test_small_file_reads(tmp_path):
    reader = _read_bytes(tmp_path, SMALL)
    assert reader.get("tokenizer.ggml.tokens") == ["<s>", "hello", "wörld"]
    assert reader.tensor("output_norm.weight").data.tolist() == [1.0] * 8


mutations = st.lists(st.tuples(st.integers(0, len(SMALL) - 1), st.integers(0, 255)), min_size=1, max_size=8)


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations)
def test_random_byte_changes_never_crash(tmp_path, changes):
    data = bytearray(SMALL)
    for position, value in changes:
        data[position] = value
    with contextlib.suppress(GGUFError):
        _touch_everything(_read_bytes(tmp_path, bytes(data)))


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(SMALL) - 1))
def test_every_truncation_is_a_typed_error(tmp_path, length):
    with pytest.raises(GGUFError):
        _touch_everything(_read_bytes(tmp_path, SMALL[:length]))


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(SMALL)), st.binary(min_size=1, max_size=64))
def test_inserted_garbage_never_crashes(tmp_path, position, garbage):
    with contextlib.suppress(GGUFError):
        _touch_everything(_read_bytes(tmp_path, SMALL[:position] + garbage + SMALL[position:]))


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([8, 16]), st.sampled_from([2**64 - 1, 2**63, 2**40, 2**32 + 1, 10**9]))
def test_huge_counts_in_the_header_are_refused_fast(tmp_path, offset, count):
    data = bytearray(SMALL)
    data[offset : offset + 8] = struct.pack("<Q", count)
    with pytest.raises(GGUFError, match="cannot fit"):
        _read_bytes(tmp_path, bytes(data))


def _first_string_length_offset() -> int:
    return 4 + 4 + 8 + 8  # magic, version, tensor count, kv count


@pytest.mark.parametrize("length", [2**64 - 1, 2**62, len(SMALL)])
def test_huge_string_length_is_refused(tmp_path, length):
    data = bytearray(SMALL)
    start = _first_string_length_offset()
    data[start : start + 8] = struct.pack("<Q", length)
    with pytest.raises(GGUFError):
        _read_bytes(tmp_path, bytes(data))


def _header(num_tensors: int, num_kv: int, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, num_tensors, num_kv)


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _tensor_info(name: str, ne: list[int], ggml_type: int, offset: int) -> bytes:
    return _string(name) + struct.pack(f"<I{len(ne)}QIQ", len(ne), *ne, ggml_type, offset)


def _crafted(
    num_kv_bytes: bytes = b"", num_kv: int = 0, tensors: list[bytes] = (), tail: bytes = b""
) -> bytes:
    body = _header(len(tensors), num_kv) + num_kv_bytes + b"".join(tensors)
    body += b"\x00" * ((-len(body)) % 32)
    return body + tail


CASES = {
    "empty file": b"",
    "wrong magic": b"GGML" + b"\x00" * 40,
    "version 1": _header(0, 0, version=1),
    "big endian": b"GGUF" + struct.pack(">IQQ", 3, 0, 0),
    "unknown value type": _crafted(_string("k") + struct.pack("<I", 99), num_kv=1),
    "bool out of range": _crafted(_string("k") + struct.pack("<IB", 7, 2), num_kv=1),
    "invalid utf-8 key": _crafted(struct.pack("<Q", 2) + b"\xff\xfe" + struct.pack("<IB", 0, 1), num_kv=1),
    "duplicate key": _crafted((_string("k") + struct.pack("<IB", 0, 1)) * 2, num_kv=2),
    "array longer than file": _crafted(_string("k") + struct.pack("<IIQ", 9, 4, 2**40), num_kv=1),
    "string array longer than file": _crafted(_string("k") + struct.pack("<IIQ", 9, 8, 2**40), num_kv=1),
    "nested arrays too deep": _crafted(
        _string("k") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 6, num_kv=1
    ),
    "alignment not a power of two": _crafted(
        _string("general.alignment") + struct.pack("<II", 4, 24), num_kv=1
    ),
    "alignment of wrong type": _crafted(_string("general.alignment") + struct.pack("<Ii", 5, 32), num_kv=1),
    "zero dims": _crafted(tensors=[_string("t") + struct.pack("<IIQ", 0, 0, 0)]),
    "five dims": _crafted(tensors=[_tensor_info("t", [1, 1, 1, 1, 1], 0, 0)]),
    "zero-size dim": _crafted(tensors=[_tensor_info("t", [4, 0], 0, 0)]),
    "unknown tensor type": _crafted(tensors=[_tensor_info("t", [4], 77, 0)]),
    "unsupported tensor type": _crafted(tensors=[_tensor_info("t", [32], 16, 0)]),
    "row not whole blocks": _crafted(tensors=[_tensor_info("t", [30], 2, 0)], tail=b"\x00" * 64),
    "data past the end": _crafted(tensors=[_tensor_info("t", [64], 0, 0)], tail=b"\x00" * 16),
    "offset past the end": _crafted(tensors=[_tensor_info("t", [4], 0, 2**63)], tail=b"\x00" * 64),
    "misaligned offset": _crafted(tensors=[_tensor_info("t", [4], 0, 4)], tail=b"\x00" * 64),
    "duplicate tensor": _crafted(
        tensors=[_tensor_info("t", [4], 0, 0), _tensor_info("t", [4], 0, 32)], tail=b"\x00" * 64
    ),
    "element count overflow": _crafted(tensors=[_tensor_info("t", [2**32, 2**32, 2**32, 2**32], 0, 0)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crafted_hostile_file(tmp_path, name):
    with pytest.raises(GGUFError) as error:
        _read_bytes(tmp_path, CASES[name])
    assert str(tmp_path) in str(error.value)


def test_missing_file_is_a_typed_error(tmp_path):
    with pytest.raises(GGUFError, match="cannot open"):
        GGUFReader(tmp_path / "absent.gguf")


def _string_array(count: int, items: bytes) -> bytes:
    return _header(0, 1) + _string("tokens") + struct.pack("<IIQ", 9, 8, count) + items


@pytest.mark.parametrize(
    ("count", "items", "message"),
    [
        (2, _string("a") + struct.pack("<Q", 2) + b"\xff\xfe", r"'tokens'\[1\] is not valid UTF-8"),
        (2, _string("a") + struct.pack("<Q", 2**20) + b"xy", r"truncated: 'tokens'\[1\] needs 1048576"),
        (2, _string("a") + b"\x01\x00\x00\x00\x00\x00\x00", r"truncated: 'tokens'\[1\] length needs 8"),
    ],
)
def test_bad_item_of_a_string_array_is_named(tmp_path, count, items, message):
    with pytest.raises(GGUFError, match=message):
        _read_bytes(tmp_path, _string_array(count, items))

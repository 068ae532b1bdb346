"""GGUF writer: metadata of every value type and aligned tensor data, readable by llama.cpp.

Tensors can be given as arrays or as zero-argument callables returning the array, so a converter
can stream a model larger than memory: each tensor is produced, written and dropped in turn.
"""

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_values import DEFAULT_ALIGNMENT, GGUF_MAGIC, SCALAR_DTYPES, GGUFField, GGUFValueType

TensorSource = np.ndarray | Callable[[], np.ndarray]


@dataclass(slots=True)
class _PendingTensor:
    name: str
    ggml_type: GGMLType
    shape: tuple[int, ...]  # numpy order
    nbytes: int
    source: TensorSource


class GGUFWriter:
    """Collects fields and tensors, then writes one GGUF v3 file in a single pass."""

    def __init__(self, alignment: int = DEFAULT_ALIGNMENT):
        assert alignment > 0 and alignment & (alignment - 1) == 0, "alignment must be a power of two"
        self.alignment = alignment
        self.fields: dict[str, GGUFField] = {}
        self.tensors: list[_PendingTensor] = []
        if alignment != DEFAULT_ALIGNMENT:
            self.add_field("general.alignment", alignment, GGUFValueType.UINT32)

    def add_field(
        self, key: str, value: Any, value_type: GGUFValueType, item_type: GGUFValueType | None = None
    ) -> None:
        if key in self.fields:
            raise ValueError(f"duplicate metadata key {key!r}")
        if value_type == GGUFValueType.ARRAY and item_type is None:
            raise ValueError(f"array field {key!r} needs an item type")
        self.fields[key] = GGUFField(key, value_type, value, item_type)

    def add_uint32(self, key: str, value: int) -> None:
        self.add_field(key, value, GGUFValueType.UINT32)

    def add_int32(self, key: str, value: int) -> None:
        self.add_field(key, value, GGUFValueType.INT32)

    def add_uint64(self, key: str, value: int) -> None:
        self.add_field(key, value, GGUFValueType.UINT64)

    def add_float32(self, key: str, value: float) -> None:
        self.add_field(key, value, GGUFValueType.FLOAT32)

    def add_bool(self, key: str, value: bool) -> None:
        self.add_field(key, value, GGUFValueType.BOOL)

    def add_string(self, key: str, value: str) -> None:
        self.add_field(key, value, GGUFValueType.STRING)

    def add_array(self, key: str, values: Iterable[Any], item_type: GGUFValueType) -> None:
        values = list(values) if item_type == GGUFValueType.STRING else np.asarray(values)
        self.add_field(key, values, GGUFValueType.ARRAY, item_type)

    def add_tensor(
        self, name: str, source: TensorSource, ggml_type: GGMLType, shape: tuple[int, ...] | None = None
    ) -> None:
        """Add a tensor of logical `shape` (numpy order). For quantized types `source` holds the
        packed blocks, (..., row_bytes) uint8; float types take an array of the element type."""
        if any(t.name == name for t in self.tensors):
            raise ValueError(f"duplicate tensor name {name!r}")
        if shape is None:
            assert isinstance(source, np.ndarray), "shape is required for lazy tensors"
            if ggml_type not in (GGMLType.F32, GGMLType.F16, GGMLType.BF16) and source.dtype == np.uint8:
                raise ValueError(f"tensor {name!r}: give the logical shape of a quantized tensor")
            shape = source.shape
        geometry = BLOCK_GEOMETRY[ggml_type]
        if shape[-1] % geometry.block_size:
            raise ValueError(f"tensor {name!r}: row {shape[-1]} not a multiple of {geometry.block_size}")
        num_elements = int(np.prod(shape, dtype=np.int64))
        nbytes = num_elements // geometry.block_size * geometry.type_size
        self.tensors.append(_PendingTensor(name, ggml_type, tuple(shape), nbytes, source))

    def write(self, path: str | Path, on_tensor: Callable[[str, int], None] | None = None) -> None:
        """Write the file; `on_tensor(name, nbytes)` is called after each tensor (progress bars)."""
        with open(path, "wb") as out:
            out.write(self._header_bytes())
            _pad(out, self.alignment)
            for tensor in self.tensors:
                data = tensor.source() if callable(tensor.source) else tensor.source
                raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
                if raw.nbytes != tensor.nbytes:
                    raise ValueError(f"tensor {tensor.name!r}: {raw.nbytes} bytes, expected {tensor.nbytes}")
                out.write(raw.data)
                _pad(out, self.alignment)
                if on_tensor is not None:
                    on_tensor(tensor.name, tensor.nbytes)

    def _header_bytes(self) -> bytes:
        parts = [GGUF_MAGIC, struct.pack("<IQQ", 3, len(self.tensors), len(self.fields))]
        for field in self.fields.values():
            parts.append(_string(field.key))
            parts.append(struct.pack("<I", field.value_type))
            parts.append(_value(field.value, field.value_type, field.item_type))
        offset = 0
        for tensor in self.tensors:
            parts.append(_string(tensor.name))
            ne = tuple(reversed(tensor.shape))
            parts.append(struct.pack(f"<I{len(ne)}Q", len(ne), *ne))
            parts.append(struct.pack("<IQ", tensor.ggml_type, offset))
            offset += (tensor.nbytes + self.alignment - 1) // self.alignment * self.alignment
        return b"".join(parts)


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _value(value: Any, value_type: GGUFValueType, item_type: GGUFValueType | None) -> bytes:
    if value_type == GGUFValueType.STRING:
        return _string(value)
    if value_type in SCALAR_DTYPES:
        if value_type == GGUFValueType.BOOL:
            value = 1 if value else 0
        return np.array(value, dtype=SCALAR_DTYPES[value_type]).tobytes()
    assert value_type == GGUFValueType.ARRAY and item_type is not None
    head = struct.pack("<IQ", item_type, len(value))
    if item_type in SCALAR_DTYPES:
        return head + np.asarray(value).astype(SCALAR_DTYPES[item_type], copy=False).tobytes()
    if item_type == GGUFValueType.STRING:
        return head + b"".join(_string(item) for item in value)
    return head + b"".join(_value(item.value, item.value_type, item.item_type) for item in value)


def _pad(out: BinaryIO, alignment: int) -> None:
    position = out.tell()
    out.write(b"\x00" * ((-position) % alignment))


def copy_fields(writer: GGUFWriter, fields: Iterable[GGUFField], skip: Iterable[str] = ()) -> None:
    """Copy metadata fields, with their exact types, from a reader into a writer."""
    skipped = set(skip) | {"general.alignment"}
    for field in fields:
        if field.key not in skipped:
            writer.add_field(field.key, field.value, field.value_type, field.item_type)

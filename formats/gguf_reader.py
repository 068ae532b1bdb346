"""Memory-mapped, validating GGUF reader.

Every count, length, offset and shape is checked against the bytes actually in the file before
it is used, so a truncated or hostile file raises `GGUFError` instead of crashing, hanging,
allocating without bound or reading past the end. Tensor data is never copied: `Tensor.data` is a
numpy view of the mapping and nothing is paged in until it is touched.
"""

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from formats.errors import GGUFError
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_values import (
    DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    MAX_DIMS,
    SCALAR_DTYPES,
    SUPPORTED_VERSIONS,
    GGUFField,
    GGUFValueType,
)

MAX_NESTING = 4  # arrays of arrays deeper than this are refused
MAX_KEY_BYTES = 65535
MAX_ELEMENTS = 1 << 50
_U64 = struct.Struct("<Q")


@dataclass(frozen=True, slots=True)
class Tensor:
    """A tensor of a GGUF file. `shape` is numpy order (rows last-dim-contiguous): reversed ggml `ne`."""

    name: str
    ggml_type: GGMLType
    shape: tuple[int, ...]
    offset: int  # absolute byte offset in the file
    nbytes: int
    data: np.ndarray  # zero-copy view: typed for float types, (..., row_bytes) uint8 for quant types

    @property
    def num_elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1


class _Cursor:
    """Reads little-endian values from the mapped file, checking each read against the end."""

    def __init__(self, buf: np.ndarray, path: str):
        self.buf = buf
        self.raw = memoryview(buf)  # struct and bytes slicing here are far cheaper than numpy
        self.pos = 0
        self.path = path

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def fail(self, what: str) -> GGUFError:
        return GGUFError(f"{self.path}: {what} (at byte {self.pos})")

    def take(self, nbytes: int, what: str) -> np.ndarray:
        if nbytes < 0 or nbytes > self.remaining:
            raise self.fail(f"truncated: {what} needs {nbytes} bytes, {self.remaining} left")
        view = self.buf[self.pos : self.pos + nbytes]
        self.pos += nbytes
        return view

    def scalar(self, value_type: GGUFValueType, what: str) -> Any:
        dtype = SCALAR_DTYPES[value_type]
        value = self.take(dtype.itemsize, what).view(dtype)[0]
        if value_type == GGUFValueType.BOOL:
            if value > 1:
                raise self.fail(f"{what}: bool value {int(value)} is neither 0 nor 1")
            return bool(value)
        return value.item()

    def u32(self, what: str) -> int:
        return self.scalar(GGUFValueType.UINT32, what)

    def u64(self, what: str) -> int:
        return self.scalar(GGUFValueType.UINT64, what)

    def string(self, what: str, max_bytes: int | None = None) -> str:
        if self.remaining < 8:
            raise self.fail(f"truncated: {what} length needs 8 bytes, {self.remaining} left")
        (length,) = _U64.unpack_from(self.raw, self.pos)
        if max_bytes is not None and length > max_bytes:
            raise self.fail(f"{what}: length {length} exceeds the limit of {max_bytes} bytes")
        start = self.pos + 8
        if length > len(self.raw) - start:
            raise self.fail(f"truncated: {what} needs {length} bytes, {len(self.raw) - start} left")
        self.pos = start + length
        try:
            return str(self.raw[start : self.pos], "utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"{what} is not valid UTF-8 ({exc.reason})") from None

    def strings(self, count: int, key: str) -> list[str]:
        """`count` strings in a row (a vocabulary: ~100k) in one tight loop; the first bad one is
        re-read by `string`, which raises its precise error."""
        raw, pos, end, items = self.raw, self.pos, len(self.raw), []
        try:
            for _ in range(count):
                (length,) = _U64.unpack_from(raw, pos)
                if length > end - pos - 8:
                    break
                items.append(str(raw[pos + 8 : pos + 8 + length], "utf-8"))
                pos += 8 + length
            else:
                self.pos = pos
                return items
        except (struct.error, UnicodeDecodeError):
            pass
        self.pos = pos
        self.string(f"{key!r}[{len(items)}]")
        raise self.fail(f"{key!r}[{len(items)}] could not be read")

    def value_type(self, what: str) -> GGUFValueType:
        raw = self.u32(what)
        try:
            return GGUFValueType(raw)
        except ValueError:
            raise self.fail(f"{what}: unknown value type {raw}") from None


class GGUFReader:
    """Opens a GGUF file read-only; exposes `fields`, `metadata`, `tensors` and `alignment`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.buf = _map_file(self.path)
        cursor = _Cursor(self.buf, str(self.path))
        self.version, num_tensors, num_kv = _read_header(cursor)
        self.fields: dict[str, GGUFField] = _read_fields(cursor, num_kv)
        self.alignment = _alignment(self.fields, cursor)
        infos = _read_tensor_infos(cursor, num_tensors)
        self.data_offset = _align(cursor.pos, self.alignment)
        if self.data_offset > len(self.buf) and infos:
            raise cursor.fail("truncated: tensor data section starts past the end of the file")
        self.tensors: dict[str, Tensor] = {info[0]: self._make_tensor(*info, cursor) for info in infos}

    @property
    def metadata(self) -> dict[str, Any]:
        return {key: field.value for key, field in self.fields.items()}

    def get(self, key: str, default: Any = None) -> Any:
        field = self.fields.get(key)
        return default if field is None else field.value

    def require(self, key: str, expected: type | tuple[type, ...] | None = None) -> Any:
        """The value of `key`, or GGUFError naming the key when it is missing or mistyped."""
        if key not in self.fields:
            raise GGUFError(f"{self.path}: required metadata key {key!r} is missing")
        value = self.fields[key].value
        if expected is not None and not isinstance(value, expected):
            raise GGUFError(f"{self.path}: metadata key {key!r} has type {type(value).__name__}")
        return value

    def tensor(self, name: str) -> Tensor:
        if name not in self.tensors:
            raise GGUFError(f"{self.path}: tensor {name!r} not found")
        return self.tensors[name]

    def _make_tensor(self, name, ggml_type, ne, rel_offset, cursor) -> Tensor:
        geometry = BLOCK_GEOMETRY[ggml_type]
        num_elements = int(np.prod(ne, dtype=object)) if ne else 1
        if ne and ne[0] % geometry.block_size:
            raise cursor.fail(
                f"tensor {name!r}: row length {ne[0]} is not a multiple of the "
                f"{ggml_type.name} block size {geometry.block_size}"
            )
        nbytes = num_elements // geometry.block_size * geometry.type_size
        if rel_offset % self.alignment:
            raise cursor.fail(f"tensor {name!r}: offset {rel_offset} is not aligned to {self.alignment}")
        start = self.data_offset + rel_offset
        if start + nbytes > len(self.buf):
            raise cursor.fail(
                f"tensor {name!r}: data [{start}, {start + nbytes}) runs past the end of the file "
                f"({len(self.buf)} bytes)"
            )
        shape = tuple(reversed(ne))
        raw = self.buf[start : start + nbytes]
        return Tensor(name, ggml_type, shape, start, nbytes, _typed_view(raw, ggml_type, shape))


def _map_file(path: Path) -> np.ndarray:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                raise GGUFError(f"{path}: empty file, not a GGUF model")
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise GGUFError(f"{path}: cannot open ({exc.strerror})") from None
    return np.frombuffer(mapping, dtype=np.uint8)


def _read_header(cursor: _Cursor) -> tuple[int, int, int]:
    magic = cursor.take(4, "magic").tobytes() if cursor.remaining >= 4 else b""
    if magic != GGUF_MAGIC:
        raise cursor.fail(f"not a GGUF file (magic {magic!r}, expected {GGUF_MAGIC!r})")
    version = cursor.u32("version")
    if version not in SUPPORTED_VERSIONS:
        if version & 0xFFFF == 0 and (version >> 24) in SUPPORTED_VERSIONS:
            raise cursor.fail("big-endian GGUF files are not supported")
        raise cursor.fail(f"unsupported GGUF version {version} (supported: {SUPPORTED_VERSIONS})")
    num_tensors = cursor.u64("tensor count")
    num_kv = cursor.u64("metadata count")
    # Each tensor info takes >= 8+1+4+8+4+8 bytes and each key-value >= 8+1+4+1; counts that could
    # not fit in the rest of the file are corruption, not a reason to loop for a long time.
    if num_tensors * 33 > cursor.remaining:
        raise cursor.fail(f"tensor count {num_tensors} cannot fit in the file")
    if num_kv * 14 > cursor.remaining:
        raise cursor.fail(f"metadata count {num_kv} cannot fit in the file")
    return version, num_tensors, num_kv


def _read_fields(cursor: _Cursor, num_kv: int) -> dict[str, GGUFField]:
    fields: dict[str, GGUFField] = {}
    for index in range(num_kv):
        key = cursor.string(f"metadata key #{index}", MAX_KEY_BYTES)
        if key in fields:
            raise cursor.fail(f"duplicate metadata key {key!r}")
        value_type = cursor.value_type(f"type of {key!r}")
        value, item_type = _read_value(cursor, value_type, key, depth=0)
        fields[key] = GGUFField(key, value_type, value, item_type)
    return fields


def _read_value(cursor: _Cursor, value_type: GGUFValueType, key: str, depth: int):
    if value_type == GGUFValueType.STRING:
        return cursor.string(f"value of {key!r}"), None
    if value_type != GGUFValueType.ARRAY:
        return cursor.scalar(value_type, f"value of {key!r}"), None
    if depth >= MAX_NESTING:
        raise cursor.fail(f"{key!r}: arrays nested deeper than {MAX_NESTING}")
    item_type = cursor.value_type(f"item type of {key!r}")
    count = cursor.u64(f"length of {key!r}")
    if item_type in SCALAR_DTYPES:
        dtype = SCALAR_DTYPES[item_type]
        if count > cursor.remaining // dtype.itemsize:
            raise cursor.fail(f"array {key!r} of {count} items runs past the end of the file")
        items = cursor.take(count * dtype.itemsize, f"array {key!r}").view(dtype)
        if item_type == GGUFValueType.BOOL:
            if np.any(items > 1):
                raise cursor.fail(f"array {key!r} holds a bool that is neither 0 nor 1")
            items = items.view(np.bool_)
        return items, item_type
    if count > cursor.remaining // 8:  # a string or an array header takes at least 8 bytes
        raise cursor.fail(f"array {key!r} of {count} items runs past the end of the file")
    if item_type == GGUFValueType.STRING:
        return cursor.strings(count, key), item_type
    nested = [_read_value(cursor, item_type, f"{key}[{i}]", depth + 1) for i in range(count)]
    return [GGUFField(f"{key}[{i}]", item_type, v, t) for i, (v, t) in enumerate(nested)], item_type


def _alignment(fields: dict[str, GGUFField], cursor: _Cursor) -> int:
    field = fields.get("general.alignment")
    if field is None:
        return DEFAULT_ALIGNMENT
    value = field.value
    if field.value_type != GGUFValueType.UINT32 or value == 0 or value & (value - 1):
        raise cursor.fail(f"general.alignment must be a power-of-two uint32, got {value!r}")
    return value


def _read_tensor_infos(cursor: _Cursor, num_tensors: int) -> list[tuple]:
    infos = []
    names: set[str] = set()
    for index in range(num_tensors):
        name = cursor.string(f"tensor #{index} name", MAX_KEY_BYTES)
        if name in names:
            raise cursor.fail(f"duplicate tensor name {name!r}")
        names.add(name)
        num_dims = cursor.u32(f"tensor {name!r} dimension count")
        if not 1 <= num_dims <= MAX_DIMS:
            raise cursor.fail(f"tensor {name!r}: {num_dims} dimensions (allowed 1..{MAX_DIMS})")
        ne = [cursor.u64(f"tensor {name!r} dim {d}") for d in range(num_dims)]
        if any(dim == 0 for dim in ne) or int(np.prod(ne, dtype=object)) > MAX_ELEMENTS:
            raise cursor.fail(f"tensor {name!r}: invalid shape {ne}")
        raw_type = cursor.u32(f"tensor {name!r} type")
        try:
            ggml_type = GGMLType(raw_type)
        except ValueError:
            raise cursor.fail(f"tensor {name!r}: unknown ggml type {raw_type}") from None
        if ggml_type not in BLOCK_GEOMETRY:
            raise cursor.fail(f"tensor {name!r}: unsupported ggml type {ggml_type.name}")
        offset = cursor.u64(f"tensor {name!r} offset")
        infos.append((name, ggml_type, tuple(ne), offset))
    return infos


def _align(position: int, alignment: int) -> int:
    return (position + alignment - 1) // alignment * alignment


_FLOAT_VIEWS = {
    GGMLType.F32: np.dtype("<f4"),
    GGMLType.F16: np.dtype("<f2"),
    GGMLType.BF16: np.dtype("<u2"),  # numpy has no bfloat16: raw bits
    GGMLType.F64: np.dtype("<f8"),
    GGMLType.I8: np.dtype("<i1"),
    GGMLType.I16: np.dtype("<i2"),
    GGMLType.I32: np.dtype("<i4"),
    GGMLType.I64: np.dtype("<i8"),
}


def _typed_view(raw: np.ndarray, ggml_type: GGMLType, shape: tuple[int, ...]) -> np.ndarray:
    dtype = _FLOAT_VIEWS.get(ggml_type)
    if dtype is not None:
        return raw.view(dtype).reshape(shape)
    geometry = BLOCK_GEOMETRY[ggml_type]
    row_bytes = shape[-1] // geometry.block_size * geometry.type_size
    return raw.reshape((*shape[:-1], row_bytes))

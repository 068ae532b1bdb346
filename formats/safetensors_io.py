"""safetensors files: a validated, memory-mapped reader and a writer, without torch.

Layout: u64 little-endian header length, a JSON header mapping names to
{dtype, shape, data_offsets: [begin, end]} (offsets relative to the data section), then the data.
"""

import json
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from formats.errors import FormatError

MAX_HEADER_BYTES = 100 * 1024 * 1024

# BF16 has no numpy dtype: it travels as raw uint16 bits and keeps its name.
DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_NAME_OF_DTYPE = {dtype: name for name, dtype in DTYPES.items() if name != "BF16"}


class SafetensorsError(FormatError):
    """A safetensors file is truncated, malformed or uses an unsupported dtype."""


@dataclass(frozen=True, slots=True)
class StoredTensor:
    name: str
    dtype: str  # safetensors dtype name, e.g. "F32", "BF16"
    shape: tuple[int, ...]
    data: np.ndarray  # zero-copy view of the file


def read_safetensors(path: str | Path) -> dict[str, StoredTensor]:
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            buf = np.frombuffer(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ), dtype=np.uint8)
    except (OSError, ValueError) as exc:
        raise SafetensorsError(f"{path}: cannot open ({exc})") from None
    if len(buf) < 8:
        raise SafetensorsError(f"{path}: truncated (no header length)")
    (header_len,) = struct.unpack("<Q", buf[:8].tobytes())
    if header_len > min(MAX_HEADER_BYTES, len(buf) - 8):
        raise SafetensorsError(f"{path}: header length {header_len} is larger than the file allows")
    try:
        header = json.loads(buf[8 : 8 + header_len].tobytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorsError(f"{path}: header is not valid JSON ({exc})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not a JSON object")
    data = buf[8 + header_len :]
    return {
        name: _tensor(path, name, entry, data) for name, entry in header.items() if name != "__metadata__"
    }


def _tensor(path: Path, name: str, entry: object, data: np.ndarray) -> StoredTensor:
    def fail(what: str) -> SafetensorsError:
        return SafetensorsError(f"{path}: tensor {name!r}: {what}")

    if not isinstance(entry, dict):
        raise fail("entry is not an object")
    dtype_name, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype_name not in DTYPES:
        raise fail(f"unsupported dtype {dtype_name!r}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise fail(f"invalid shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
        raise fail(f"invalid data_offsets {offsets!r}")
    begin, end = offsets
    dtype = DTYPES[dtype_name]
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if not 0 <= begin <= end <= len(data) or end - begin != nbytes:
        raise fail(f"data_offsets {offsets} do not hold {nbytes} bytes inside the file")
    view = data[begin:end].view(dtype).reshape(shape)
    return StoredTensor(name, dtype_name, tuple(shape), view)


def write_safetensors(
    path: str | Path,
    tensors: dict[str, np.ndarray],
    dtype_names: dict[str, str] | None = None,
    metadata: dict[str, str] | None = None,
) -> None:
    """Write arrays; `dtype_names` marks uint16 arrays that hold BF16 bits as "BF16"."""
    dtype_names = dtype_names or {}
    header: dict[str, object] = {"__metadata__": metadata} if metadata else {}
    offset = 0
    arrays = {}
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        dtype_name = dtype_names.get(name) or _NAME_OF_DTYPE.get(array.dtype.newbyteorder("<"))
        if dtype_name is None:
            raise SafetensorsError(f"tensor {name!r}: dtype {array.dtype} has no safetensors name")
        header[name] = {
            "dtype": dtype_name,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        offset += array.nbytes
        arrays[name] = array
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * ((-len(encoded)) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        for array in arrays.values():
            out.write(array.view(np.uint8).reshape(-1).data)

"""A readable summary of a GGUF file: metadata (long arrays abbreviated) and the tensor table."""

from pathlib import Path
from typing import Any

import numpy as np

from formats.gguf_reader import GGUFReader
from formats.gguf_values import GGUFField, GGUFValueType

MAX_LISTED_ITEMS = 8


def summarize(path: str | Path) -> dict[str, Any]:
    reader = GGUFReader(path)
    tensors = [
        {"name": t.name, "type": t.ggml_type.name, "shape": list(t.shape), "bytes": t.nbytes}
        for t in reader.tensors.values()
    ]
    return {
        "path": str(reader.path),
        "version": reader.version,
        "alignment": reader.alignment,
        "file_bytes": len(reader.buf),
        "num_parameters": sum(t.num_elements for t in reader.tensors.values()),
        "metadata": {key: _field_summary(field) for key, field in reader.fields.items()},
        "tensors": tensors,
    }


def _field_summary(field: GGUFField) -> Any:
    if field.value_type != GGUFValueType.ARRAY:
        return field.value
    items = field.value
    assert field.item_type is not None
    listed = [_plain(item) for item in list(items[:MAX_LISTED_ITEMS])]
    if len(items) <= MAX_LISTED_ITEMS:
        return listed
    return {"array_of": field.item_type.name.lower(), "length": len(items), "first": listed}


def _plain(value: Any) -> Any:
    if isinstance(value, GGUFField):
        return _field_summary(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def format_summary(summary: dict[str, Any]) -> str:
    lines = [
        f"{summary['path']}: GGUF v{summary['version']}, {summary['file_bytes']:,} bytes, "
        f"{len(summary['tensors'])} tensors, {summary['num_parameters']:,} parameters",
        "",
        "metadata:",
    ]
    for key, value in summary["metadata"].items():
        text = repr(value)
        lines.append(f"  {key} = {text if len(text) <= 100 else text[:97] + '...'}")
    lines += ["", f"  {'name':<36} {'type':<6} {'shape':<20} {'bytes':>12}"]
    for tensor in summary["tensors"]:
        shape = "x".join(str(d) for d in tensor["shape"])
        lines.append(f"  {tensor['name']:<36} {tensor['type']:<6} {shape:<20} {tensor['bytes']:>12,}")
    return "\n".join(lines)

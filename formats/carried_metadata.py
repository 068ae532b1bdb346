"""GGUF metadata a Hugging Face checkpoint has no place for (`general.*`: name, license,
organization, ...), carried through config.json so GGUF -> safetensors -> GGUF keeps it exactly.

The export writes it under config.json's `gguf_metadata` as {key: {"type", "item_type", "value"}}
(GGUF value type names); `convert` reads it back, checked like any outside input.
"""

from typing import Any

import numpy as np

from formats.errors import ConversionError
from formats.gguf_reader import GGUFReader
from formats.gguf_values import SCALAR_DTYPES, GGUFField, GGUFValueType

CARRIED_KEY = "gguf_metadata"
REGENERATED = frozenset(
    {"general.architecture", "general.file_type", "general.quantization_version", "general.alignment"}
)
MAX_FIELDS = 64
MAX_TEXT = 65536
_INTEGERS = frozenset(t for t in GGUFValueType if t.name.startswith(("UINT", "INT")))
_FLOATS = frozenset((GGUFValueType.FLOAT32, GGUFValueType.FLOAT64))


def exported_metadata(reader: GGUFReader) -> dict[str, dict[str, Any]]:
    """The file's `general.*` fields that conversion does not regenerate, JSON-ready."""
    carried = {}
    for key, field in reader.fields.items():
        if key.startswith("general.") and key not in REGENERATED:
            if field.item_type == GGUFValueType.ARRAY:
                raise ConversionError(f"{key}: nested arrays cannot be carried through config.json")
            item_type = field.item_type.name if field.item_type is not None else None
            value = field.value.tolist() if isinstance(field.value, np.ndarray) else field.value
            carried[key] = {"type": field.value_type.name, "item_type": item_type, "value": value}
    return carried


def imported_metadata(config: dict[str, Any]) -> list[GGUFField]:
    """The fields config.json carries, each checked against its declared type."""
    carried = config.get(CARRIED_KEY, {})
    if not isinstance(carried, dict) or len(carried) > MAX_FIELDS:
        raise ConversionError(f"config.json: {CARRIED_KEY} must be an object of at most {MAX_FIELDS} fields")
    return [_field(key, entry) for key, entry in carried.items()]


def _field(key: Any, entry: Any) -> GGUFField:
    if not isinstance(key, str) or not key.startswith("general.") or key in REGENERATED:
        raise ConversionError(f"config.json: {CARRIED_KEY} cannot set {key!r}")
    if not isinstance(entry, dict):
        raise ConversionError(f"config.json: {CARRIED_KEY}[{key!r}] must be an object")
    value_type = _value_type(key, entry.get("type"))
    value = entry.get("value")
    if value_type != GGUFValueType.ARRAY:
        _check_value(key, value, value_type)
        return GGUFField(key, value_type, value, None)
    item_type = _value_type(key, entry.get("item_type"))
    if item_type == GGUFValueType.ARRAY or not isinstance(value, list) or len(value) > MAX_TEXT:
        raise ConversionError(f"config.json: {CARRIED_KEY}[{key!r}] must be a flat list")
    for item in value:
        _check_value(key, item, item_type)
    return GGUFField(key, value_type, value, item_type)


def _value_type(key: str, name: Any) -> GGUFValueType:
    if not isinstance(name, str) or name not in GGUFValueType.__members__:
        raise ConversionError(f"config.json: {CARRIED_KEY}[{key!r}] has an unknown type {name!r}")
    return GGUFValueType[name]


def _check_value(key: str, value: Any, value_type: GGUFValueType) -> None:
    if value_type == GGUFValueType.STRING:
        valid = isinstance(value, str) and len(value) <= MAX_TEXT
    elif value_type == GGUFValueType.BOOL:
        valid = isinstance(value, bool)
    elif value_type in _INTEGERS:
        limits = np.iinfo(SCALAR_DTYPES[value_type])
        valid = isinstance(value, int) and not isinstance(value, bool) and limits.min <= value <= limits.max
    else:
        valid = value_type in _FLOATS and isinstance(value, int | float) and not isinstance(value, bool)
    if not valid:
        raise ConversionError(f"config.json: {CARRIED_KEY}[{key!r}] is not a valid {value_type.name}")

"""Where a Hugging Face config.json keeps its rope settings (conversion and the cloud's loader)."""

from typing import Any

from formats.errors import FormatError


def rope_settings(config: dict[str, Any], error: type[FormatError]) -> dict[str, Any]:
    """The rope base and scaling wherever transformers wrote them: `rope_parameters` (transformers
    5: rope_theta, rope_type, factor, ...) or the older top-level `rope_theta` and `rope_scaling`.
    What cannot be read raises `error`."""
    parameters = config.get("rope_parameters")
    if parameters is not None:
        if not isinstance(parameters, dict):
            raise error("config.json: rope_parameters must be an object")
        if any(isinstance(v, dict) for v in parameters.values()):
            raise error("config.json: per-layer-type rope_parameters are not supported")
        return parameters
    scaling = config.get("rope_scaling") or {}
    if not isinstance(scaling, dict):
        raise error("config.json: rope_scaling must be an object")
    legacy = dict(scaling)
    if "rope_theta" in config:
        legacy["rope_theta"] = config["rope_theta"]
    return legacy

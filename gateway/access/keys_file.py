"""API keys from a TOML file: [[keys]] tables with id, sha256 (hex of the secret), tenant and the
optional privacy_mode, allowed_models, requests_per_minute, tokens_per_minute, latency_target_ms
(end to end), ttft_target_ms, tpot_target_ms, limit_per_user (the per-minute limits apply to each
end user the requests name in `safety_identifier` or `user`, rather than to the key as a whole).
A bad file fails at start with the field named."""

import tomllib
from pathlib import Path

from gateway.access.api_keys import ApiKey
from gateway.privacy import PrivacyMode

FIELDS = {
    "id",
    "sha256",
    "tenant",
    "privacy_mode",
    "allowed_models",
    "requests_per_minute",
    "tokens_per_minute",
    "latency_target_ms",
    "ttft_target_ms",
    "tpot_target_ms",
    "limit_per_user",
}


class KeysFileError(ValueError):
    """The keys file is missing, not TOML, or a field is wrong."""


def load_keys(path: str | Path) -> list[ApiKey]:
    try:
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise KeysFileError(f"{path}: {exc}") from None
    return parse_keys(document.get("keys", []), f"{path}: keys")


def parse_keys(entries: list, where_prefix: str) -> list[ApiKey]:
    """[[keys]] tables -> ApiKeys; errors name the entry and field."""
    keys = []
    for index, entry in enumerate(entries):
        where = f"{where_prefix}[{index}]"
        unknown = set(entry) - FIELDS
        if unknown:
            raise KeysFileError(f"{where}: unknown field(s) {sorted(unknown)}")
        for name in ("id", "sha256", "tenant"):
            if not isinstance(entry.get(name), str) or not entry[name]:
                raise KeysFileError(f"{where}.{name}: a non-empty string is required")
        digest = entry["sha256"].lower()
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise KeysFileError(f"{where}.sha256: must be 64 hex digits (sha256 of the key)")
        try:
            mode = PrivacyMode(entry.get("privacy_mode", "auto"))
        except ValueError:
            raise KeysFileError(f"{where}.privacy_mode: one of {[m.value for m in PrivacyMode]}") from None
        models = entry.get("allowed_models")
        if models is not None and not (isinstance(models, list) and all(isinstance(m, str) for m in models)):
            raise KeysFileError(f"{where}.allowed_models: a list of model names")
        per_user = entry.get("limit_per_user", False)
        if not isinstance(per_user, bool):
            raise KeysFileError(f"{where}.limit_per_user: true or false")
        limits = {}
        for name in (
            "requests_per_minute",
            "tokens_per_minute",
            "latency_target_ms",
            "ttft_target_ms",
            "tpot_target_ms",
        ):
            value = entry.get(name)
            if value is not None and (
                not isinstance(value, int | float) or isinstance(value, bool) or value <= 0
            ):
                raise KeysFileError(f"{where}.{name}: a positive number")
            limits[name] = value
        keys.append(
            ApiKey(
                entry["id"],
                digest,
                entry["tenant"],
                mode,
                frozenset(models) if models is not None else None,
                **limits,
                limit_per_user=per_user,
            )
        )
    return keys

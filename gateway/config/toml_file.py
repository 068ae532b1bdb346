"""The gateway's TOML configuration file, with every field overridable from the environment.

    [gateway]      host, port, privacy_mode, max_body_bytes, compress_responses, allow_unknown_params,
                   cors_allow_origins, responses_retention_hours, keepalive_s (idle client
                   connections closed after it, default 75)
    [routing]      profile (or policy, its earlier name: gateway/routing/profiles.py),
                   latency_target_ms, ttft_target_ms, tpot_target_ms, cooldown_s,
                   max_cooldown_s, failure_window_s, min_failures, failure_rate (the circuit
                   breaker: gateway/routing/circuit_breaker.py), max_attempts, retry_backoff_s,
                   expected_output_tokens, first_token_deadline_s, first_token_deadline_factor
    [routing.profiles.NAME]  filters (plugin names, in order), scorer, picker: a profile of
                   one's own (gateway/routing/registry.py names the plugins)
    [telemetry]    service_name, otlp_endpoint, trace_file
    [[models]]     name, gguf, context_length
    [[edge_nodes]] id, address, models, queue_bound
    [[upstreams]]  id, url, kind, models (names, or a table: ours = the upstream's), api_key_env,
                   max_concurrency, metrics_url, api ("completions" | "chat"), capabilities,
                   keepalive_s (idle pooled connections dropped after it, default 3)
    [cloud]        redis_url, prefix, models, signing_secret
    [privacy]      ledger (the privacy ledger's file; default $HYBRIDGW_HOME/privacy-ledger.jsonl,
                   "" for none), ledger_key_file (default: the ledger's path + ".key"), store
                   ("file" | "redis": a stream per replica), ledger_id (default: host + a
                   persisted id), retention_days, fsync (default true), rotate_mb, rotate_daily
    [http]         header_timeout_s, body_timeout_s, keepalive_timeout_s, max_connections
    [dialects]     strict_max_tokens (Anthropic's max_tokens past the window: a 400 in Anthropic's
                   words rather than clamped; default false)
    [[keys]]       as in gateway/config/keys_file.py (tenant, privacy mode, models, limits)

Environment: HYBRIDGW_<SECTION>_<FIELD> for tables (HYBRIDGW_GATEWAY_PORT=9000,
HYBRIDGW_CLOUD_REDIS_URL=...), HYBRIDGW_<ARRAY>_<INDEX>_<FIELD> for arrays of tables
(HYBRIDGW_EDGE_NODES_0_ADDRESS=10.0.0.5:50051). Values are parsed as TOML when they parse
(numbers, booleans, arrays), else taken as strings. Any bad field stops the start with its name.
"""

import os
import tomllib
from pathlib import Path
from typing import Any

from gateway.config.gateway_config import GatewayConfig
from gateway.config.keys_file import FIELDS as KEY_FIELDS
from gateway.config.keys_file import KeysFileError, parse_keys
from gateway.config.toml_sections import (
    ConfigError,
    ServerSettings,
    edge_nodes_section,
    http_section,
    models_section,
    number,
    routing_section,
    server_section,
    upstreams_section,
    value_of,
)
from gateway.privacy import PrivacyMode
from gateway.privacy.ledger import default_ledger_path

ENV_PREFIX = "HYBRIDGW_"
SCHEMA: dict[str, set[str]] = {
    "gateway": {
        "host",
        "port",
        "privacy_mode",
        "max_body_bytes",
        "compress_responses",
        "allow_unknown_params",
        "cors_allow_origins",
        "responses_retention_hours",
        "keepalive_s",
    },
    "routing": {
        "latency_target_ms",
        "ttft_target_ms",
        "tpot_target_ms",
        "cooldown_s",
        "max_cooldown_s",
        "failure_window_s",
        "min_failures",
        "failure_rate",
        "max_attempts",
        "retry_backoff_s",
        "expected_output_tokens",
        "first_token_deadline_s",
        "first_token_deadline_factor",
        "policy",
        "profile",
        "profiles",
    },
    "telemetry": {"service_name", "otlp_endpoint", "trace_file"},
    "models": {"name", "gguf", "context_length"},
    "edge_nodes": {"id", "address", "models", "queue_bound"},
    "upstreams": {
        "id",
        "url",
        "kind",
        "models",
        "api_key_env",
        "max_concurrency",
        "metrics_url",
        "api",
        "capabilities",
        "keepalive_s",
    },
    "cloud": {"redis_url", "prefix", "models", "signing_secret"},
    "privacy": {
        "ledger",
        "ledger_key_file",
        "store",
        "ledger_id",
        "retention_days",
        "fsync",
        "rotate_mb",
        "rotate_daily",
    },
    "http": {"header_timeout_s", "body_timeout_s", "keepalive_timeout_s", "max_connections"},
    "dialects": {"strict_max_tokens"},
    "keys": set(KEY_FIELDS),
}
ARRAYS = {"models", "edge_nodes", "upstreams", "keys"}
__all__ = ["ConfigError", "ServerSettings", "load_config"]


def load_config(
    path: str | Path | None,
    environ: dict[str, str] | None = None,
    embedded: dict[str, list[dict]] | None = None,
):
    """-> (GatewayConfig, ServerSettings) from the file (optional) plus environment overrides.

    `embedded`: array entries appended after the file's ([[models]], [[edge_nodes]]): the nodes
    `hybridgw up` starts itself."""
    document: dict[str, Any] = {}
    if path is not None:
        try:
            document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    _check_schema(document)
    _apply_environment(document, os.environ if environ is None else environ)
    for section, entries in (embedded or {}).items():
        document[section] = document.get(section, []) + entries
    return _build(document)


def _check_schema(document: dict) -> None:
    for section, value in document.items():
        if section not in SCHEMA:
            raise ConfigError(f"unknown section [{section}] (known: {', '.join(sorted(SCHEMA))})")
        entries = value if section in ARRAYS else [value]
        if section in ARRAYS and not isinstance(value, list):
            raise ConfigError(f"{section}: must be an array of tables ([[{section}]])")
        for index, entry in enumerate(entries):
            where = f"{section}[{index}]" if section in ARRAYS else section
            if not isinstance(entry, dict):
                raise ConfigError(f"{where}: must be a table")
            unknown = set(entry) - SCHEMA[section]
            if unknown:
                raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown field")


def _apply_environment(document: dict, environ: dict[str, str]) -> None:
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        path = name[len(ENV_PREFIX) :].lower()
        section = next((s for s in sorted(SCHEMA, key=len, reverse=True) if path.startswith(s + "_")), None)
        if section is None:
            continue  # other HYBRIDGW_* variables (HYBRIDGW_HOME, ...) are not configuration
        rest = path[len(section) + 1 :]
        if section in ARRAYS:
            index_text, _, field = rest.partition("_")
            if not index_text.isdigit():
                raise ConfigError(f"{name}: expected {ENV_PREFIX}{section.upper()}_<INDEX>_<FIELD>")
            entries = document.setdefault(section, [])
            while len(entries) <= int(index_text):
                entries.append({})
            target = entries[int(index_text)]
        else:
            field, target = rest, document.setdefault(section, {})
        if field not in SCHEMA[section]:
            raise ConfigError(f"{name}: {section} has no field {field!r}")
        target[field] = _parse_value(raw)


def _parse_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _build(document: dict):
    gateway, cloud = document.get("gateway", {}), document.get("cloud", {})
    privacy, dialects = document.get("privacy", {}), document.get("dialects", {})
    models = models_section(document)
    try:
        mode = PrivacyMode(gateway.get("privacy_mode", "auto"))
    except ValueError:
        raise ConfigError(f"gateway.privacy_mode: one of {[m.value for m in PrivacyMode]}") from None
    try:
        keys = parse_keys(document.get("keys", []), "keys")
    except KeysFileError as exc:
        raise ConfigError(str(exc)) from None
    try:
        config = GatewayConfig(
            models=models,
            edge_nodes=edge_nodes_section(document, models),
            upstreams=upstreams_section(document, models),
            redis_url=value_of("cloud", cloud, "redis_url", str),
            redis_prefix=value_of("cloud", cloud, "prefix", str, "hybridgw:"),
            cloud_models=value_of("cloud", cloud, "models", list, []),
            cloud_signing_secret=value_of("cloud", cloud, "signing_secret", str),
            privacy_mode=mode,
            routing=routing_section(document.get("routing", {})),
            max_body_bytes=value_of("gateway", gateway, "max_body_bytes", int, 1 << 20),
            api_keys=keys,
            compress_responses=value_of("gateway", gateway, "compress_responses", bool, False),
            allow_unknown_params=value_of("gateway", gateway, "allow_unknown_params", bool, False),
            cors_allow_origins=value_of("gateway", gateway, "cors_allow_origins", list, []),
            responses_retention_hours=number(
                value_of("gateway", gateway, "responses_retention_hours", int | float, 720.0)
            ),
            privacy_ledger=value_of("privacy", privacy, "ledger", str, str(default_ledger_path())) or None,
            privacy_ledger_key_file=value_of("privacy", privacy, "ledger_key_file", str),
            privacy_ledger_store=value_of("privacy", privacy, "store", str, "file"),
            privacy_ledger_id=value_of("privacy", privacy, "ledger_id", str),
            privacy_ledger_retention_days=number(value_of("privacy", privacy, "retention_days", int | float)),
            privacy_ledger_fsync=value_of("privacy", privacy, "fsync", bool, True),
            privacy_ledger_rotate_mb=number(value_of("privacy", privacy, "rotate_mb", int | float)),
            privacy_ledger_rotate_daily=value_of("privacy", privacy, "rotate_daily", bool, False),
            http=http_section(document.get("http", {})),
            strict_max_tokens=value_of("dialects", dialects, "strict_max_tokens", bool, False),
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return config, server_section(gateway, document.get("telemetry", {}))

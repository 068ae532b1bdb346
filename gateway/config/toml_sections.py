"""The sections of the gateway's configuration file (gateway/config/toml_file.py), each checked field
by field into its dataclass: a bad field is a ConfigError naming it."""

from dataclasses import dataclass, field

from gateway.config.gateway_config import EdgeNodeEntry, HttpLimits, ModelEntry, RoutingPolicy, UpstreamEntry
from gateway.routing.profile import ProfileSpec
from gateway.routing.profiles import DEFAULT_PROFILE


class ConfigError(ValueError):
    """The configuration is invalid; the message names the field."""


DEFAULT_KEEPALIVE_S = 75.0


@dataclass(slots=True)
class TelemetrySettings:
    service_name: str = "hybridgw-gateway"
    otlp_endpoint: str | None = None  # e.g. http://otel-collector:4317; None: OTEL_EXPORTER_OTLP_ENDPOINT
    trace_file: str | None = None  # JSON lines, one span per line


@dataclass(slots=True)
class ServerSettings:
    """What the process needs besides the app: where to listen and where traces go."""

    host: str = "127.0.0.1"
    port: int = 8080
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    # an idle client connection is closed after this long (nginx's default; aiohttp's own is an
    # hour): a slow or vanished client holds no socket past it
    keepalive_s: float = DEFAULT_KEEPALIVE_S

    def __post_init__(self) -> None:
        if not self.keepalive_s > 0:
            raise ConfigError("gateway.keepalive_s must be > 0")


def number(value) -> float | None:
    return None if value is None else float(value)


def value_of(where: str, entry: dict, name: str, kind, default=None, required=False):
    """entry[name] checked against `kind` (a bool is not an int), else `default`."""
    value = entry.get(name, default)
    if value is None and not required:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(f"{where}.{name}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def models_section(document: dict) -> list[ModelEntry]:
    return [
        ModelEntry(
            value_of(f"models[{i}]", m, "name", str, required=True),
            value_of(f"models[{i}]", m, "gguf", str, required=True),
            value_of(f"models[{i}]", m, "context_length", int),
        )
        for i, m in enumerate(document.get("models", []))
    ]


def upstreams_section(document: dict, models: list[ModelEntry]) -> list[UpstreamEntry]:
    entries = []
    for i, u in enumerate(document.get("upstreams", [])):
        where = f"upstreams[{i}]"
        served = value_of(where, u, "models", list | dict, [m.name for m in models])
        entries.append(
            UpstreamEntry(
                value_of(where, u, "id", str, required=True),
                value_of(where, u, "url", str, required=True),
                value_of(where, u, "kind", str, required=True),
                served if isinstance(served, dict) else {name: name for name in served},
                value_of(where, u, "api_key_env", str),
                value_of(where, u, "max_concurrency", int, 64),
                value_of(where, u, "metrics_url", str),
                value_of(where, u, "api", str, "completions"),
                value_of(where, u, "capabilities", list, []),
                number(value_of(where, u, "keepalive_s", int | float, 3.0)),
            )
        )
    return entries


def edge_nodes_section(document: dict, models: list[ModelEntry]) -> list[EdgeNodeEntry]:
    return [
        EdgeNodeEntry(
            value_of(f"edge_nodes[{i}]", e, "id", str, required=True),
            value_of(f"edge_nodes[{i}]", e, "address", str, required=True),
            value_of(f"edge_nodes[{i}]", e, "models", list, [m.name for m in models]),
            value_of(f"edge_nodes[{i}]", e, "queue_bound", int, 16),
        )
        for i, e in enumerate(document.get("edge_nodes", []))
    ]


def routing_section(routing: dict) -> RoutingPolicy:
    return RoutingPolicy(
        latency_target_ms=value_of("routing", routing, "latency_target_ms", int | float),
        ttft_target_ms=value_of("routing", routing, "ttft_target_ms", int | float),
        tpot_target_ms=value_of("routing", routing, "tpot_target_ms", int | float),
        profile=_profile_name(routing),
        profiles=_profiles(routing.get("profiles", {})),
        cooldown_s=value_of("routing", routing, "cooldown_s", int | float, 5.0),
        max_cooldown_s=value_of("routing", routing, "max_cooldown_s", int | float, 60.0),
        failure_window_s=value_of("routing", routing, "failure_window_s", int | float, 10.0),
        min_failures=value_of("routing", routing, "min_failures", int, 3),
        failure_rate=value_of("routing", routing, "failure_rate", int | float, 0.5),
        max_attempts=value_of("routing", routing, "max_attempts", int, 2),
        retry_backoff_s=value_of("routing", routing, "retry_backoff_s", int | float, 0.05),
        expected_output_tokens=value_of("routing", routing, "expected_output_tokens", int, 256),
        first_token_deadline_s=value_of("routing", routing, "first_token_deadline_s", int | float, 5.0),
        first_token_deadline_factor=value_of(
            "routing", routing, "first_token_deadline_factor", int | float, 4.0
        ),
    )


def _profile_name(routing: dict) -> str:
    """`profile`, or `policy`, its earlier name (the static policies are profiles now)."""
    profile = value_of("routing", routing, "profile", str)
    policy = value_of("routing", routing, "policy", str)
    if profile is not None and policy is not None and profile != policy:
        raise ConfigError(f"routing: profile {profile!r} and policy {policy!r} (its earlier name) disagree")
    return profile or policy or DEFAULT_PROFILE


def _profiles(profiles) -> dict[str, ProfileSpec]:
    """[routing.profiles.NAME] tables: filters (names, in order), scorer, picker."""
    if not isinstance(profiles, dict):
        raise ConfigError("routing.profiles: must be a table of profiles ([routing.profiles.NAME])")
    specs = {}
    for name, entry in profiles.items():
        where = f"routing.profiles.{name}"
        if not isinstance(entry, dict) or set(entry) - {"filters", "scorer", "picker"}:
            raise ConfigError(f"{where}: a table of filters, scorer and picker only")
        filters = value_of(where, entry, "filters", list, required=True)
        if not all(isinstance(f, str) for f in filters):
            raise ConfigError(f"{where}.filters: expected plugin names (strings), got {filters!r}")
        scorer, picker = (value_of(where, entry, kind, str, required=True) for kind in ("scorer", "picker"))
        specs[name] = ProfileSpec(tuple(filters), scorer, picker)
    return specs


def server_section(gateway: dict, telemetry: dict) -> ServerSettings:
    return ServerSettings(
        value_of("gateway", gateway, "host", str, "127.0.0.1"),
        value_of("gateway", gateway, "port", int, 8080),
        TelemetrySettings(
            value_of("telemetry", telemetry, "service_name", str, "hybridgw-gateway"),
            value_of("telemetry", telemetry, "otlp_endpoint", str),
            value_of("telemetry", telemetry, "trace_file", str),
        ),
        number(value_of("gateway", gateway, "keepalive_s", int | float, DEFAULT_KEEPALIVE_S)),
    )


def http_section(http: dict) -> HttpLimits:
    defaults = HttpLimits()
    seconds = {
        name: float(value_of("http", http, name, int | float, getattr(defaults, name)))
        for name in ("header_timeout_s", "body_timeout_s", "keepalive_timeout_s")
    }
    return HttpLimits(
        **seconds, max_connections=value_of("http", http, "max_connections", int, defaults.max_connections)
    )

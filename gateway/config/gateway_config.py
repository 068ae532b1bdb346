"""The gateway's configuration: models, nodes, API keys, privacy and routing defaults."""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.core.capabilities import DECLARABLE, VISION
from gateway.privacy import PrivacyMode
from gateway.routing.profile import ProfileSpec
from gateway.routing.profiles import DEFAULT_PROFILE, resolve_profile


# An API key as configured ([[keys]], or a keys file: gateway/config/keys_file.py): stored as a
# sha256 hash, with a tenant, a privacy mode, allowed models and limits. Requests are
# authenticated against the keys by gateway/access/api_keys.py.
@dataclass(frozen=True, slots=True)
class ApiKey:
    key_id: str  # a name for logs and limit buckets; never the secret
    sha256: str  # hex digest of the secret
    tenant: str
    privacy_mode: PrivacyMode = PrivacyMode.AUTO
    allowed_models: frozenset[str] | None = None  # None: every model
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    latency_target_ms: float | None = None  # end to end
    ttft_target_ms: float | None = None
    tpot_target_ms: float | None = None
    limit_per_user: bool = False  # the limits apply per end user (safety_identifier or user)

    def bucket(self, end_user: str | None) -> str:
        """The id its limits are counted under: the key's, or with `limit_per_user` the end
        user's within it (hashed: user ids stay out of Redis keys and logs)."""
        if not self.limit_per_user or not end_user:
            return self.key_id
        return f"{self.key_id}/user:{hashlib.sha256(end_user.encode()).hexdigest()[:24]}"


@dataclass(slots=True)
class ModelEntry:
    name: str
    gguf_path: str  # read for tokenizer, chat template, context length (never the weights)
    context_length: int | None = None


@dataclass(slots=True)
class EdgeNodeEntry:
    node_id: str
    address: str  # host:port of `hybridgw edge`
    models: list[str]
    queue_bound: int = 16


@dataclass(slots=True)
class UpstreamEntry:
    """An OpenAI-compatible server as a node (gateway/backends/upstream.py)."""

    node_id: str
    url: str  # its /v1 base, e.g. http://vllm:8000/v1
    kind: str  # "edge": on-prem, may take private requests; "cloud": off-prem, never does
    models: dict[str, str]  # our model name -> the upstream's own name for it
    api_key_env: str | None = None  # the environment variable holding its API key
    max_concurrency: int = 64  # requests it runs at once (as many again may wait there)
    metrics_url: str | None = None  # its Prometheus /metrics: load from vLLM's, llama-server's or ours
    # "completions": token-id prompts to /v1/completions (vLLM, llama-server, SGLang, hybridgw);
    # "chat": the client's messages to /v1/chat/completions (any OpenAI-compatible API)
    api: str = "completions"
    capabilities: list[str] = field(default_factory=list)  # of DECLARABLE: what it does itself
    # an idle pooled connection is dropped after this long: below the server's own keep-alive
    # (llama-server's and uvicorn's, so vLLM's and SGLang's: 5 s), or it closes one this gateway
    # is about to reuse; 0: a new connection per request
    keepalive_s: float = 3.0

    def __post_init__(self) -> None:
        where = f"upstreams[{self.node_id}]"
        if self.api not in ("completions", "chat"):
            raise ValueError(f'{where}.api must be "completions" or "chat"')
        unknown = set(self.capabilities) - set(DECLARABLE)
        if unknown or not all(isinstance(c, str) for c in self.capabilities):
            raise ValueError(f"{where}.capabilities: each one of {', '.join(DECLARABLE)}")
        if VISION in self.capabilities and self.api != "chat":
            raise ValueError(f'{where}.capabilities: "vision" needs api = "chat" (images travel in messages)')
        if self.kind not in ("edge", "cloud"):
            raise ValueError(f'upstreams[{self.node_id}].kind must be "edge" or "cloud"')
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"upstreams[{self.node_id}].url must be an http(s) URL (its /v1 base)")
        if self.max_concurrency < 1:
            raise ValueError(f"upstreams[{self.node_id}].max_concurrency must be >= 1")
        if not self.keepalive_s >= 0:
            raise ValueError(f"upstreams[{self.node_id}].keepalive_s must be >= 0")


@dataclass(frozen=True, slots=True)
class RoutingPolicy:
    """`profile`: the routing profile (gateway/routing/profiles.py): "predicted" (the router's
    model), a static one to compare it with (benchmarks/routing.py), or one composed in
    `profiles` (name -> the names of its filters, scorer and picker); every one keeps private
    requests on-prem. An unknown profile or plugin stops the start (RoutingProfileError)."""

    latency_target_ms: float | None = None  # end to end; a key's or the request header's wins
    ttft_target_ms: float | None = None
    tpot_target_ms: float | None = None
    # a node is taken out (skipped, then given one trial request) when, of its requests' outcomes
    # in the last failure_window_s, at least min_failures and failure_rate failed
    # (gateway/routing/circuit_breaker.py): for cooldown_s, doubled after each failed trial up
    # to max_cooldown_s
    cooldown_s: float = 5.0
    max_cooldown_s: float = 60.0
    failure_window_s: float = 10.0
    min_failures: int = 3
    failure_rate: float = 0.5
    # tries before the first token: on another node when one can take the request, else on the
    # same one after retry_backoff_s (doubled each time)
    max_attempts: int = 2
    retry_backoff_s: float = 0.05
    expected_output_tokens: int = 256  # cap on max_tokens when predicting completion time
    profile: str = DEFAULT_PROFILE
    profiles: Mapping[str, ProfileSpec] = field(default_factory=dict)
    # a node with no first token by max(deadline, factor x its predicted TTFT) loses the request
    # to another node that can take it (a hung or paused node); with none, the request waits on
    first_token_deadline_s: float = 5.0
    first_token_deadline_factor: float = 4.0

    def __post_init__(self) -> None:
        for name in ("latency_target_ms", "ttft_target_ms", "tpot_target_ms"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"routing.{name} must be positive")
        resolve_profile(self.profile, self.profiles)  # RoutingProfileError (a ValueError) names what is wrong
        if not 0 <= self.cooldown_s <= self.max_cooldown_s:
            raise ValueError("routing.cooldown_s must be >= 0 and <= max_cooldown_s")
        if not (self.failure_window_s > 0 and self.min_failures >= 1 and 0 < self.failure_rate <= 1):
            raise ValueError("routing: failure_window_s > 0, min_failures >= 1, 0 < failure_rate <= 1")
        if self.retry_backoff_s < 0:
            raise ValueError("routing.retry_backoff_s must be >= 0")
        if not 1 <= self.max_attempts <= 10:
            raise ValueError("routing.max_attempts must be between 1 and 10")
        if self.expected_output_tokens < 1:
            raise ValueError("routing.expected_output_tokens must be >= 1")
        if not self.first_token_deadline_s > 0 or not self.first_token_deadline_factor >= 1:
            raise ValueError("routing.first_token_deadline_s must be > 0 and its factor >= 1")


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """What a client may hold of the front door (gateway/http/limits.py)."""

    header_timeout_s: float = 10.0  # a request's line and headers, from its first byte
    body_timeout_s: float = 30.0  # its whole body, from its headers
    keepalive_timeout_s: float = 15.0  # an idle keep-alive connection
    max_connections: int = 1000  # past it, a connection is answered 503 and closed

    def __post_init__(self) -> None:
        for name in ("header_timeout_s", "body_timeout_s", "keepalive_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"http.{name} must be positive")
        if self.max_connections < 1:
            raise ValueError("http.max_connections must be at least 1")


@dataclass(slots=True)
class GatewayConfig:
    models: list[ModelEntry]
    edge_nodes: list[EdgeNodeEntry] = field(default_factory=list)
    upstreams: list[UpstreamEntry] = field(default_factory=list)
    redis_url: str | None = None  # the cloud pool; None: edge only
    redis_prefix: str = "hybridgw:"
    cloud_models: list[str] = field(default_factory=list)
    # the secret cloud workers' keys derive from (shared/chunk_signing.py): set, reply chunks and
    # heartbeats count only when their worker signed them
    cloud_signing_secret: str | None = None
    privacy_mode: PrivacyMode = PrivacyMode.AUTO
    routing: RoutingPolicy = field(default_factory=RoutingPolicy)
    max_body_bytes: int = 1 << 20
    api_keys: list[ApiKey] = field(default_factory=list)  # empty: no authentication
    compress_responses: bool = False  # gzip/deflate streamed responses for clients that accept it
    allow_unknown_params: bool = False  # True: a body parameter no one declares is ignored, not a 400
    responses_retention_hours: float = 720.0  # stored Responses are kept this long (30 days)
    cors_allow_origins: list[str] = field(default_factory=list)  # browser origins; "*": any; empty: off
    # the privacy ledger (gateway/privacy/ledger.py): an append-only file of signed, chained
    # routing decisions, and the file of its signing key (default: beside it, ".key" added)
    privacy_ledger: str | None = None
    privacy_ledger_key_file: str | None = None
    # "file" (privacy_ledger) or "redis" (a stream per replica under redis_prefix, named by
    # privacy_ledger_id, trimmed to privacy_ledger_retention_days; needs redis_url)
    privacy_ledger_store: str = "file"
    privacy_ledger_id: str | None = None  # None: the host's name and an id kept beside the key
    privacy_ledger_retention_days: float | None = None
    privacy_ledger_fsync: bool = True  # a record counts once fsynced (group commit: one per batch)
    privacy_ledger_rotate_mb: float | None = None  # a new file (segment) past this size
    privacy_ledger_rotate_daily: bool = False  # a new file each day (UTC)
    http: HttpLimits = field(default_factory=HttpLimits)
    # Anthropic's max_tokens past what the window leaves: clamped (False), or a 400 in Anthropic's
    # words (True, as Anthropic's API answers it)
    strict_max_tokens: bool = False

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("models: at least one model is required")
        names = {m.name for m in self.models}
        for upstream in self.upstreams:
            unknown = set(upstream.models) - names
            if unknown:
                raise ValueError(f"upstreams[{upstream.node_id}].models: unknown model(s) {sorted(unknown)}")
        for node in self.edge_nodes:
            unknown = set(node.models) - names
            if unknown:
                raise ValueError(f"edge_nodes[{node.node_id}].models: unknown model(s) {sorted(unknown)}")
        if not all(isinstance(origin, str) and origin for origin in self.cors_allow_origins):
            raise ValueError('cors_allow_origins: a list of origins (strings), or ["*"]')
        if self.max_body_bytes < 1024:
            raise ValueError("max_body_bytes must be at least 1024")
        if self.privacy_ledger_store not in ("file", "redis"):
            raise ValueError('privacy.store: "file" or "redis"')
        if self.privacy_ledger_rotate_mb is not None and not self.privacy_ledger_rotate_mb > 0:
            raise ValueError("privacy.rotate_mb must be positive")
        if self.privacy_ledger_store == "redis" and not self.redis_url:
            raise ValueError('privacy.store = "redis" needs cloud.redis_url')

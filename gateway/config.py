"""The gateway's configuration: models, nodes, privacy and routing defaults."""

from dataclasses import dataclass, field

from gateway.auth import ApiKey
from gateway.privacy import PrivacyMode


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
class GatewayConfig:
    models: list[ModelEntry]
    edge_nodes: list[EdgeNodeEntry] = field(default_factory=list)
    redis_url: str | None = None  # the cloud pool; None: edge only
    redis_prefix: str = "hybridgw:"
    cloud_models: list[str] = field(default_factory=list)
    privacy_mode: PrivacyMode = PrivacyMode.AUTO
    latency_target_ms: float | None = None
    max_body_bytes: int = 1 << 20
    api_keys: list[ApiKey] = field(default_factory=list)  # empty: no authentication

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("models: at least one model is required")
        names = {m.name for m in self.models}
        for node in self.edge_nodes:
            unknown = set(node.models) - names
            if unknown:
                raise ValueError(f"edge_nodes[{node.node_id}].models: unknown model(s) {sorted(unknown)}")
        if self.max_body_bytes < 1024:
            raise ValueError("max_body_bytes must be at least 1024")

"""API keys: stored as sha256 hashes, each with a tenant, a privacy mode, allowed models, limits."""

import hashlib
import hmac
from dataclasses import dataclass

from aiohttp import web

from gateway.core.errors import APIError
from gateway.privacy import PrivacyMode


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


class KeyStore:
    """The configured keys by hash; with no keys configured the gateway is open."""

    def __init__(self, keys: list[ApiKey]):
        self.keys = list(keys)
        self._by_hash = {k.sha256.lower(): k for k in self.keys}

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    def authenticate(self, request: web.Request) -> ApiKey | None:
        """The key of the request; None when no keys are configured (open gateway)."""
        if not self.enabled:
            return None
        header = request.headers.get("Authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret:
            secret = request.headers.get("x-api-key", "")  # Anthropic's clients send the key here
        if not secret.strip():
            raise APIError(
                401,
                "You didn't provide an API key (Authorization: Bearer <key>, or x-api-key: <key>).",
                "invalid_request_error",
                code="missing_api_key",
            )
        digest = hash_key(secret.strip())
        for candidate, key in self._by_hash.items():
            if hmac.compare_digest(candidate, digest):
                return key
        raise APIError(401, "Incorrect API key provided.", "invalid_request_error", code="invalid_api_key")


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_model_allowed(key: ApiKey | None, model: str) -> None:
    if key is not None and key.allowed_models is not None and model not in key.allowed_models:
        raise APIError(
            403,
            f"This key may not use the model `{model}`.",
            "invalid_request_error",
            "model",
            "model_not_allowed",
        )

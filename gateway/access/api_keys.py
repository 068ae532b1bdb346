"""API keys at the door: a request's key found among the configured ones (gateway/config/gateway_config.py)
by the sha256 of its secret, and what the key may use."""

import hashlib
import hmac

from aiohttp import web

from gateway.config.gateway_config import ApiKey
from gateway.core.errors import APIError


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

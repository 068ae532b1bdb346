"""Who sent a request and what it asks of routing: the privacy inputs, the latency targets and
the tenant, and what follows from them for the nodes' prefix caches.

A request's cache salt scopes every node's prefix cache (shared/prefix_hash.py): requests share
cached prompt tokens only within one tenant and one privacy class, so a private prompt's cached
blocks are never a hit for anyone else, and no tenant learns from timing what another sent."""

import hashlib
from dataclasses import dataclass, field

from gateway.privacy import PrivacyMode
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import LatencyTargets
from shared.prefix_hash import block_hashes, num_cached_blocks

ANONYMOUS_TENANT = ""  # requests without an API key


@dataclass(frozen=True, slots=True)
class RequestContext:
    privacy_mode: PrivacyMode
    privacy_header: str | None = None  # X-Hybridgw-Privacy
    targets: LatencyTargets = field(default_factory=LatencyTargets)
    tenant: str = ANONYMOUS_TENANT


def cache_salt(tenant: str, is_private: bool) -> str:
    """Opaque and stable: nodes see neither the tenant's name nor its class."""
    scope = f"{tenant}\x00{'private' if is_private else 'public'}"
    return hashlib.sha256(scope.encode()).hexdigest()[:32]


class PromptBlocks:
    """A prompt's chained block hashes under its cache salt, computed once per block size: for
    predicting each node's hits, then for counting the prompt in flight where it is sent."""

    def __init__(self, prompt_ids: list[int], salt: str):
        self.prompt_ids, self.salt = prompt_ids, salt
        self._hashes_by_block_size: dict[int, list[int]] = {}

    def hashes(self, block_size: int) -> list[int]:
        if block_size not in self._hashes_by_block_size:
            self._hashes_by_block_size[block_size] = block_hashes(self.prompt_ids, block_size, self.salt)
        return self._hashes_by_block_size[block_size]


def predicted_cached_tokens(nodes: list[NodeState], prompt: PromptBlocks) -> dict[str, int]:
    """Per node that describes its prefix cache: how many leading prompt tokens it will hold when
    it computes this prompt (at least one token is always computed). That is what it reported
    holding and, where requests share cached blocks, what this gateway's requests in flight there
    compute first: under a burst a request waits seconds for its prefill, and by then the same
    system prompt sent just before it is cached (predicted from reports alone, 20 of 24 such
    requests were expected to compute their whole prompt)."""
    cached = {}
    for node in nodes:
        block_size = node.prefix_block_size
        in_flight = node.load.block_hashes_in_flight if node.shares_prefix_blocks else {}
        if not block_size or not (node.cached_block_hashes or in_flight):
            continue
        blocks = num_cached_blocks(prompt.hashes(block_size), node.cached_block_hashes, in_flight)
        if blocks:
            cached[node.node_id] = min(blocks * block_size, len(prompt.prompt_ids) - 1)
    return cached


def prompt_block_hashes(node: NodeState, prompt: PromptBlocks) -> list[int]:
    """What a request dispatched to `node` counts there in flight: its prompt's block hashes where
    the node shares cached blocks between requests, else none."""
    if not (node.shares_prefix_blocks and node.prefix_block_size):
        return []
    return prompt.hashes(node.prefix_block_size)

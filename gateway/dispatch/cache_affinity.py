"""`prompt_cache_key`: requests that share it go where their shared prefix is cached.

The client says which requests share a long prefix (OpenAI's cache-routing hint); the gateway
remembers, per key, the node that last served one and how long that prompt was. Routing then
counts that node as holding the prefix (as many leading tokens as the shorter of the two
prompts, less one), so its predicted first token is sooner and it wins unless it is busy
enough to lose anyway: affinity through the latency model, not a pin. Keys are scoped by the
cache salt (tenant and privacy class, gateway/request/sender_context.py): one tenant's key never moves
another's requests. At most MAX_KEYS are kept, the least recently used dropped first.
"""

from collections import OrderedDict

MAX_KEYS = 65_536


class CacheAffinity:
    def __init__(self, max_keys: int = MAX_KEYS):
        self._last: OrderedDict[tuple[str, str], tuple[str, int]] = OrderedDict()
        self._max_keys = max_keys

    def cached_tokens(
        self, salt: str, key: str | None, num_tokens: int, cached: dict[str, int]
    ) -> dict[str, int]:
        """`cached` (node id -> predicted cached prompt tokens) with the key's node counted as
        holding the shared prefix."""
        if key is None or (salt, key) not in self._last:
            return cached
        node_id, previous = self._last[(salt, key)]
        self._last.move_to_end((salt, key))
        shared = max(0, min(previous, num_tokens) - 1)
        return {**cached, node_id: max(cached.get(node_id, 0), shared)}

    def served(self, salt: str, key: str | None, node_id: str, num_tokens: int) -> None:
        if key is None:
            return
        self._last[(salt, key)] = (node_id, num_tokens)
        self._last.move_to_end((salt, key))
        while len(self._last) > self._max_keys:
            self._last.popitem(last=False)

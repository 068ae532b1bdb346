"""What each free slot's KV cache still holds, so a new prompt that starts with it skips those
tokens (llama.cpp's `cache_prompt`): a chat's next turn, or requests sharing a system prompt.

A slot's cache holds, at positions 0..n-1, the keys and values of the last sequence that used it
up to what that sequence computed. A new sequence whose prompt starts with those n tokens (and
whose cache salt is the same: one tenant and privacy class) needs only the rest computed; the
positions past the match are overwritten as it runs. The prefix is matched per token; for the
gateway's placement the node also describes it as chained block hashes (shared/prefix_hash.py).
"""

from dataclasses import dataclass, field

from shared.prefix_hash import block_hashes

PREFIX_BLOCK_SIZE = 32  # tokens per hashed block in the node's report (matching is per token)


@dataclass(slots=True)
class SlotPrefix:
    cache_salt: str = ""
    token_ids: list[int] = field(default_factory=list)  # whose K/V sit at positions 0..len-1
    hashes: list[int] = field(default_factory=list)  # block_hashes(token_ids), for the report


def common_prefix_length(cached: list[int], prompt: list[int]) -> int:
    length = min(len(cached), len(prompt))
    for index in range(length):
        if cached[index] != prompt[index]:
            return index
    return length


class SlotPrefixes:
    """One SlotPrefix per slot; a slot in use has none (its sequence owns the cache)."""

    def __init__(self, num_slots: int):
        self.slots = [SlotPrefix() for _ in range(num_slots)]

    def choose(self, free_slots: list[int], prompt: list[int], cache_salt: str) -> tuple[int, int]:
        """(slot id, prompt tokens already in its cache): the free slot holding the longest prefix
        of `prompt` under the same salt; without any match, the first free slot (the one freed
        longest ago, whose cache is the least likely to be asked for again). At least one prompt
        token is always left to compute, so the step yields logits."""
        best_slot, best_length = free_slots[0], 0
        for slot_id in free_slots:
            cached = self.slots[slot_id]
            if cached.cache_salt != cache_salt or not cached.token_ids:
                continue
            length = common_prefix_length(cached.token_ids, prompt)
            if length > best_length:
                best_slot, best_length = slot_id, length
        self.slots[best_slot] = SlotPrefix()  # the new sequence owns it now
        return best_slot, min(best_length, len(prompt) - 1)

    def release(self, slot_id: int, cache_salt: str, computed_token_ids: list[int]) -> None:
        """A sequence left the slot; its computed tokens stay reusable."""
        hashes = block_hashes(computed_token_ids, PREFIX_BLOCK_SIZE, cache_salt)
        self.slots[slot_id] = SlotPrefix(cache_salt, computed_token_ids, hashes)

    def cached_block_hashes(self) -> tuple[int, ...]:
        return tuple(block_hash for slot in self.slots for block_hash in slot.hashes)

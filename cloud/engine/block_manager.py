"""Paged KV-cache blocks: allocation, reference counts, prefix caching, copy-on-write.

Invariants:
- A block with ref_cnt == 0 is in `free_block_queue`, in eviction order (least recently freed
  first); a block with ref_cnt > 0 is in no queue.
- `hash_to_block_id` maps the chained hash of a *full* block's tokens (hash of the previous block
  + this block's token ids) to the one block holding them. A cached block stays reusable after
  its requests finish until it is evicted, i.e. popped from the free queue for someone else.
- A request's blocks are freed tail first, so the blocks of a shared prefix are evicted last.
"""

from collections import OrderedDict
from dataclasses import dataclass

from cloud.engine.request import Request
from shared.prefix_hash import hash_block_tokens, salt_root


@dataclass(slots=True, eq=False)
class KVCacheBlock:
    block_id: int
    ref_cnt: int = 0
    block_hash: int | None = None


class BlockManager:
    """Fixed-size KV blocks: a free queue in eviction order, ref counts, and the prefix cache
    (`hash_to_block_id`: the chained hash of a full block, shared/prefix_hash.py, salted per
    request so tenants never share blocks)."""

    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True):
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.blocks = [KVCacheBlock(block_id) for block_id in range(num_blocks)]
        # OrderedDict as an O(1) queue that also supports removal from the middle (cache hits).
        self.free_block_queue: OrderedDict[int, KVCacheBlock] = OrderedDict(
            (b.block_id, b) for b in self.blocks
        )
        self.hash_to_block_id: dict[int, int] = {}
        self.req_to_blocks: dict[str, list[KVCacheBlock]] = {}
        self.req_to_block_hashes: dict[str, list[int]] = {}
        self.pending_copies: list[tuple[int, int]] = []  # (src, dst) block ids, copy-on-write
        self.num_prefix_queries = 0  # prompt tokens looked up
        self.num_prefix_hits = 0  # of which found cached
        self.num_copy_on_write = 0

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_queue)

    @property
    def usage(self) -> float:
        return 1.0 - self.num_free_blocks / len(self.blocks)

    def cached_block_hashes(self, limit: int) -> tuple[int, ...]:
        """Hashes of the cached full blocks, most recently cached last, at most `limit` (what a
        worker publishes for the gateway's prefix-aware placement)."""
        return tuple(self.hash_to_block_id)[-limit:]

    def block_table(self, request_id: str) -> list[int]:
        return [block.block_id for block in self.blocks_of(request_id)]

    def blocks_of(self, request_id: str) -> list[KVCacheBlock]:
        """The request's blocks in order: the live list (read it, never change it)."""
        return self.req_to_blocks.get(request_id, [])

    # -- prefix cache ----------------------------------------------------------------------

    def get_computed_blocks(self, request: Request) -> tuple[list[KVCacheBlock], int]:
        """Cached blocks holding the longest prefix of the request's tokens, and how many tokens
        they hold. At least one token is always left to compute, so the step yields logits."""
        if not self.enable_prefix_caching or request.sampling_params.prompt_logprobs is not None:
            return [], 0  # prompt logprobs need every prompt position computed
        hashes = self._block_hashes(request)
        max_blocks = (request.num_tokens - 1) // self.block_size
        computed = []
        for block_hash in hashes[:max_blocks]:
            block_id = self.hash_to_block_id.get(block_hash)
            if block_id is None:
                break
            computed.append(self.blocks[block_id])
        return computed, len(computed) * self.block_size

    def add_blocks_in_flight(self, request: Request, in_flight: set[int]) -> None:
        """Add to `in_flight` the hashes of the full blocks the request, computing its prompt
        (or recomputing its tokens after a preemption), has yet to compute."""
        if self.enable_prefix_caching and request.num_computed_tokens < request.num_tokens - 1:
            first = request.num_computed_tokens // self.block_size
            in_flight.update(self._block_hashes(request)[first : request.num_tokens // self.block_size])

    def next_block_in_flight(self, request: Request, num_computed_blocks: int, in_flight: set[int]) -> bool:
        """Whether the first block of the request after its `num_computed_blocks` cached ones is
        one that a running request is computing now (`in_flight`): the request could reuse it
        once it is computed, rather than compute the same tokens beside it."""
        if not in_flight or request.sampling_params.prompt_logprobs is not None:
            return False
        if num_computed_blocks >= (request.num_tokens - 1) // self.block_size:
            return False  # nothing more of it could come from the cache
        return self._block_hashes(request)[num_computed_blocks] in in_flight

    def record_prefix_lookup(self, num_tokens: int, num_cached: int) -> None:
        """Count an admitted request's prompt tokens and how many came from the cache."""
        self.num_prefix_queries += num_tokens
        self.num_prefix_hits += num_cached

    def _block_hashes(self, request: Request) -> list[int]:
        """Chained hashes of the request's full blocks, extended incrementally."""
        hashes = self.req_to_block_hashes.setdefault(request.request_id, [])
        if (len(hashes) + 1) * self.block_size > request.num_tokens:
            return hashes  # no new full block: nothing to read (the common decode step)
        tokens = request.all_token_ids
        while (len(hashes) + 1) * self.block_size <= len(tokens):
            start = len(hashes) * self.block_size
            parent = hashes[-1] if hashes else salt_root(request.cache_salt)
            hashes.append(hash_block_tokens(parent, tokens[start : start + self.block_size]))
        return hashes

    # -- allocation ------------------------------------------------------------------------

    def allocate_slots(
        self, request: Request, num_new_tokens: int, computed: list[KVCacheBlock] = ()
    ) -> list[int] | None:
        """Make room for `num_new_tokens` more tokens of `request` (taking the `computed` prefix
        blocks first, at admission). Returns the new block ids, or None if blocks are short."""
        needed = self._num_blocks_needed(request, num_new_tokens, computed)
        if needed > self._num_usable(computed):
            return None
        blocks = self.req_to_blocks.setdefault(request.request_id, [])
        for block in computed:
            self._touch(block)
            blocks.append(block)
        if self._copy_on_write(request.request_id, request.num_computed_tokens):
            needed -= 1
        new_blocks = [self._pop_free() for _ in range(needed)]
        blocks.extend(new_blocks)
        return [block.block_id for block in new_blocks]

    def _num_blocks_needed(self, request: Request, num_new_tokens: int, computed) -> int:
        have = len(self.req_to_blocks.get(request.request_id, [])) + len(computed)
        total = request.num_computed_tokens + len(computed) * self.block_size + num_new_tokens
        needed = max(0, -(-total // self.block_size) - have)
        if self._last_block_is_shared(request.request_id, request.num_computed_tokens):
            needed += 1  # the partly filled shared block will be copied before it is written
        return needed

    def _num_usable(self, computed) -> int:
        """Free blocks, not counting cached ones this admission is about to take off the queue."""
        return self.num_free_blocks - sum(1 for block in computed if block.ref_cnt == 0)

    def _touch(self, block: KVCacheBlock) -> None:
        if block.ref_cnt == 0:
            self.free_block_queue.pop(block.block_id)
        block.ref_cnt += 1

    def _pop_free(self) -> KVCacheBlock:
        _, block = self.free_block_queue.popitem(last=False)
        if block.block_hash is not None:  # evict: this block's contents are about to be overwritten
            if self.hash_to_block_id.get(block.block_hash) == block.block_id:
                del self.hash_to_block_id[block.block_hash]
            block.block_hash = None
        block.ref_cnt = 1
        return block

    # -- full blocks become cacheable -------------------------------------------------------

    def cache_full_blocks(self, request: Request) -> None:
        """Register every full, computed block of the request under its chained hash."""
        if not self.enable_prefix_caching:
            return
        blocks = self.req_to_blocks.get(request.request_id, [])
        num_full = min(request.num_computed_tokens // self.block_size, len(blocks))
        hashes = self._block_hashes(request)
        for block, block_hash in zip(blocks[:num_full], hashes[:num_full], strict=False):
            if block.block_hash is None and block_hash not in self.hash_to_block_id:
                block.block_hash = block_hash
                self.hash_to_block_id[block_hash] = block.block_id

    # -- freeing, forking ------------------------------------------------------------------

    def free(self, request: Request) -> None:
        """Release the request's blocks, tail first; cached ones stay reusable until evicted."""
        for block in reversed(self.req_to_blocks.pop(request.request_id, [])):
            block.ref_cnt -= 1
            assert block.ref_cnt >= 0
            if block.ref_cnt == 0:
                if block.block_hash is None:
                    # Uncached blocks hold nothing reusable: evict them before cached ones.
                    self.free_block_queue[block.block_id] = block
                    self.free_block_queue.move_to_end(block.block_id, last=False)
                else:
                    self.free_block_queue[block.block_id] = block
        self.req_to_block_hashes.pop(request.request_id, None)

    def fork(self, parent: Request, child: Request) -> None:
        """The child shares every block of the parent (n > 1); writes copy the shared tail."""
        blocks = self.req_to_blocks[parent.request_id]
        for block in blocks:
            block.ref_cnt += 1
        self.req_to_blocks[child.request_id] = list(blocks)

    def _last_block_is_shared(self, request_id: str, num_computed: int) -> bool:
        blocks = self.req_to_blocks.get(request_id, [])
        return (
            bool(blocks)
            and num_computed % self.block_size != 0
            and blocks[-1].ref_cnt > 1
            and (len(blocks) == -(-num_computed // self.block_size))
        )

    def _copy_on_write(self, request_id: str, num_computed: int) -> bool:
        if not self._last_block_is_shared(request_id, num_computed):
            return False
        blocks = self.req_to_blocks[request_id]
        shared = blocks[-1]
        shared.ref_cnt -= 1
        copy = self._pop_free()
        blocks[-1] = copy
        self.pending_copies.append((shared.block_id, copy.block_id))
        self.num_copy_on_write += 1
        return True

    def take_pending_copies(self) -> list[tuple[int, int]]:
        copies, self.pending_copies = self.pending_copies, []
        return copies

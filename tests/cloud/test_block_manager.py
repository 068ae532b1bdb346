"""Block manager on tiny specs: exact block ids, reference counts, prefix hits, eviction order."""

from cloud.engine.block_manager import BlockManager
from cloud.engine.request import Request
from shared.prefix_hash import hash_block_tokens
from shared.sampling import SamplingParams


def _request(request_id: str, tokens: list[int]) -> Request:
    return Request(request_id, tokens, SamplingParams(temperature=0, max_tokens=4))


def _admit(manager: BlockManager, request: Request) -> list[int]:
    computed, num_cached = manager.get_computed_blocks(request)
    manager.record_prefix_lookup(request.num_tokens, num_cached)
    new = manager.allocate_slots(request, request.num_tokens - num_cached, computed)
    request.num_computed_tokens = request.num_tokens
    manager.cache_full_blocks(request)
    return new


def test_allocation_takes_the_lowest_free_ids_and_grows_by_block():
    manager = BlockManager(num_blocks=8, block_size=4)
    request = _request("a", list(range(10)))  # 10 tokens -> 3 blocks
    assert _admit(manager, request) == [0, 1, 2]
    assert manager.block_table("a") == [0, 1, 2]
    request.output_token_ids += [99, 98]  # 12 tokens: still fits in 3 blocks
    assert manager.allocate_slots(request, 1) == []
    request.num_computed_tokens = 12
    assert manager.allocate_slots(request, 1) == [3]
    assert manager.num_free_blocks == 4 and manager.usage == 0.5


def test_prefix_blocks_are_shared_and_counted():
    manager = BlockManager(num_blocks=8, block_size=4)
    _admit(manager, _request("a", list(range(10))))
    b = _request("b", [*range(8), 50, 51, 52])
    computed, num_cached = manager.get_computed_blocks(b)
    assert [block.block_id for block in computed] == [0, 1] and num_cached == 8
    assert manager.allocate_slots(b, b.num_tokens - num_cached, computed) == [3]
    assert manager.block_table("b") == [0, 1, 3]
    assert [manager.blocks[i].ref_cnt for i in range(4)] == [2, 2, 1, 1]
    manager.record_prefix_lookup(b.num_tokens, num_cached)
    assert (manager.num_prefix_queries, manager.num_prefix_hits) == (10 + 11, 8)


def test_a_fully_cached_prompt_still_computes_its_last_token():
    manager = BlockManager(num_blocks=8, block_size=4)
    _admit(manager, _request("a", list(range(8))))
    computed, num_cached = manager.get_computed_blocks(_request("b", list(range(8))))
    assert [block.block_id for block in computed] == [0] and num_cached == 4


def test_freed_blocks_are_evicted_uncached_first_then_tail_first():
    manager = BlockManager(num_blocks=6, block_size=4)
    a = _request("a", list(range(10)))  # blocks 0, 1 full (cached), 2 partial
    _admit(manager, a)
    manager.free(a)
    assert all(block.ref_cnt == 0 for block in manager.blocks)
    # free queue: the partial block 2 first (nothing to reuse), fresh 3, 4, 5, then 1 before 0
    assert list(manager.free_block_queue) == [2, 3, 4, 5, 1, 0]
    # a new request that shares nothing takes 2, 3, 4, 5 and then evicts 1 (the tail of a's prefix)
    c = _request("c", list(range(100, 120)))
    assert manager.allocate_slots(c, 20) == [2, 3, 4, 5, 1]
    assert manager.hash_to_block_id == {hash_block_tokens(None, [0, 1, 2, 3]): 0}


def test_cached_blocks_survive_their_request_until_evicted():
    manager = BlockManager(num_blocks=6, block_size=4)
    a = _request("a", list(range(9)))
    _admit(manager, a)
    manager.free(a)
    b = _request("b", list(range(9)))
    computed, num_cached = manager.get_computed_blocks(b)
    assert [block.block_id for block in computed] == [0, 1] and num_cached == 8
    assert manager.allocate_slots(b, 1, computed) == [2]
    assert 0 not in manager.free_block_queue and 1 not in manager.free_block_queue


def test_allocation_fails_cleanly_when_blocks_run_out():
    manager = BlockManager(num_blocks=2, block_size=4)
    assert manager.allocate_slots(_request("a", list(range(9))), 9) is None
    assert manager.num_free_blocks == 2 and manager.block_table("a") == []


def test_fork_shares_blocks_and_copies_the_partial_tail_on_write():
    manager = BlockManager(num_blocks=8, block_size=4)
    parent = _request("p", list(range(6)))  # blocks 0 (full), 1 (2 of 4 used)
    _admit(manager, parent)
    child = _request("c", list(range(6)))
    child.num_computed_tokens = 6
    manager.fork(parent, child)
    assert manager.block_table("c") == [0, 1] and manager.blocks[1].ref_cnt == 2
    assert manager.allocate_slots(child, 1) == []  # the copy replaces block 1 in the child's table
    assert manager.block_table("c") == [0, 2] and manager.block_table("p") == [0, 1]
    assert manager.take_pending_copies() == [(1, 2)]
    assert [manager.blocks[i].ref_cnt for i in range(3)] == [2, 1, 1]


def test_hashes_chain_through_parents():
    first = hash_block_tokens(None, [1, 2])
    assert hash_block_tokens(first, [3, 4]) != hash_block_tokens(None, [3, 4])
    assert hash_block_tokens(first, [3, 4]) == hash_block_tokens(hash_block_tokens(None, [1, 2]), [3, 4])

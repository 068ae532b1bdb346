"""A slot's cached prefix reused by the next prompt that starts with it (llama.cpp's
cache_prompt), only under the same cache salt, with the same greedy tokens as without reuse."""

import pytest

from edge.engine import EdgeEngine, EngineConfig
from edge.slot_prefixes import PREFIX_BLOCK_SIZE, SlotPrefixes, common_prefix_length
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest
from shared.prefix_hash import block_hashes
from shared.sampling import SamplingParams

GREEDY = SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)
PREFIX = [(7 * i) % 50 + 3 for i in range(40)]


@pytest.fixture
def make_engine(tiny_model):
    path = str(tiny_model(GGMLType.Q8_0))
    return lambda: EdgeEngine(EngineConfig(path, num_slots=2, context_size=256, prefill_chunk=16))


def _generate(
    engine: EdgeEngine, request_id: str, prompt: list[int], salt: str = ""
) -> tuple[list[int], int]:
    """-> (greedy token ids, prompt tokens that came from the slot's cache)."""
    engine.add(EngineRequest(request_id, prompt, GREEDY, cache_salt=salt))
    tokens, cached = [], None
    while engine.has_work():
        for output in engine.step().outputs:
            tokens.append(output.token.token_id)
            cached = output.num_cached_tokens
    return tokens, cached


def test_a_prompt_extending_a_finished_one_reuses_its_slot_and_gives_the_same_tokens(make_engine):
    engine, fresh = make_engine(), make_engine()
    first, cached = _generate(engine, "a", PREFIX, "tenant-a")
    assert cached == 0
    follow_up = PREFIX + first + [11, 12, 13]  # the next turn of the same conversation
    tokens, cached = _generate(engine, "b", follow_up, "tenant-a")
    assert cached == len(PREFIX) + len(first) - 1  # every computed token (the last sampled one is not)
    assert tokens == _generate(fresh, "b", follow_up, "tenant-a")[0]
    same, cached = _generate(engine, "c", PREFIX, "tenant-a")  # the whole prompt cached: one recomputed
    assert (same, cached) == (first, len(PREFIX) - 1)


def test_another_salt_never_reuses_the_cache(make_engine):
    engine = make_engine()
    first, _ = _generate(engine, "a", PREFIX, "tenant-a")
    tokens, cached = _generate(engine, "b", PREFIX, "tenant-b")
    assert (tokens, cached) == (first, 0)


def test_the_node_reports_the_block_hashes_of_what_its_slots_hold(make_engine):
    engine = make_engine()
    assert engine.stats().cached_block_hashes == ()
    first, _ = _generate(engine, "a", PREFIX, "s")
    computed = (PREFIX + first)[: len(PREFIX) + len(first) - 1]
    stats = engine.stats()
    assert stats.prefix_block_size == PREFIX_BLOCK_SIZE
    assert list(stats.cached_block_hashes) == block_hashes(computed, PREFIX_BLOCK_SIZE, "s")


def test_the_slot_with_the_longest_match_is_chosen():
    prefixes = SlotPrefixes(3)
    prefixes.release(0, "", [1, 2, 3])
    prefixes.release(1, "", [1, 2, 3, 4, 5])
    prefixes.release(2, "x", [1, 2, 3, 4, 5, 6])  # longer, but another salt
    assert prefixes.choose([0, 1, 2], [1, 2, 3, 4, 9], "") == (1, 4)
    assert prefixes.slots[1].token_ids == []  # the new sequence owns that slot now
    assert prefixes.choose([0, 2], [8, 8], "") == (0, 0)  # no match: the slot freed longest ago
    assert common_prefix_length([1, 2], [1, 2, 3]) == 2 and common_prefix_length([], [1]) == 0

"""Chained hashes of a prompt's full blocks, computed the same way by the cloud engine's prefix
cache, by edge nodes describing what their slots hold, and by the gateway predicting which node
holds a prompt's prefix (llm-d's prefix scorer does the same with vLLM's block hashes).

Block i's hash covers the tokens of blocks 0..i (it chains its parent's hash), so one hash names a
whole prefix. The chain starts from the request's cache salt: requests of different tenants or
privacy classes never share cached blocks, even with identical prompts (vLLM's `cache_salt`)."""

import hashlib
from collections.abc import Container

import numpy as np


def salt_root(cache_salt: str) -> int | None:
    """The parent of a request's first block: None without a salt (as before salts existed)."""
    if not cache_salt:
        return None
    digest = hashlib.blake2b(cache_salt.encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "little")


def hash_block_tokens(parent_block_hash: int | None, token_ids: list[int]) -> int:
    """Stable across processes (Python's hash() is not): blake2b of the parent hash and the ids."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update((parent_block_hash or 0).to_bytes(8, "little"))
    digest.update(np.asarray(token_ids, dtype=np.int64).tobytes())
    return int.from_bytes(digest.digest(), "little")


def block_hashes(token_ids: list[int], block_size: int, cache_salt: str = "") -> list[int]:
    """The chained hash of every full block of `token_ids`."""
    hashes: list[int] = []
    parent = salt_root(cache_salt)
    for start in range(0, len(token_ids) - block_size + 1, block_size):
        parent = hash_block_tokens(parent, token_ids[start : start + block_size])
        hashes.append(parent)
    return hashes


def num_cached_blocks(hashes: list[int], held: Container[int], also_held: Container[int] = ()) -> int:
    """How many leading blocks of a prompt (its `hashes`) a node holds (in either collection)."""
    count = 0
    for block_hash in hashes:
        if block_hash not in held and block_hash not in also_held:
            break
        count += 1
    return count

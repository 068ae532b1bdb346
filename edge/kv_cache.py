"""Per-slot contiguous KV cache: each slot owns max_ctx positions of every layer."""

import mmap

import numba
import numpy as np

from formats.model_config import ModelConfig
from shared.numba_cache import use_kernel_cache

use_kernel_cache()


class KVCache:
    """k/v: (num_layers, num_slots, max_ctx, num_kv_heads, head_dim) float16 bit patterns (uint16:
    numba has no usable float16 type), as llama.cpp's f16 cache: half the memory of float32.

    Position p of slot s holds the key/value of that sequence's token p; a slot is reused by
    simply overwriting from position 0, so freeing a slot costs nothing.
    """

    def __init__(self, config: ModelConfig, num_slots: int, max_ctx: int):
        shape = (config.num_layers, num_slots, max_ctx, config.num_kv_heads, config.head_dim)
        self.k, self.v = _zeros_in_small_pages(shape), _zeros_in_small_pages(shape)
        self.num_slots = num_slots
        self.max_ctx = max_ctx

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes

    def store(self, layer: int, slot_ids: np.ndarray, positions: np.ndarray, k: np.ndarray, v: np.ndarray):
        """k, v (n, num_kv_heads*head_dim) f32 of tokens at (slot_ids, positions), rounded to
        float16 (round to nearest even) on the way in."""
        k_bits, v_bits = k.astype(np.float16).view(np.uint16), v.astype(np.float16).view(np.uint16)
        store_bits(self.k[layer], self.v[layer], slot_ids, positions, k_bits, v_bits)

    def slot_f32(self, layer: int, slot: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """Keys and values of positions [0, end) of a slot as float32 (end, num_kv_heads, head_dim)."""
        return (
            self.k[layer, slot, :end].view(np.float16).astype(np.float32),
            self.v[layer, slot, :end].view(np.float16).astype(np.float32),
        )


def _zeros_in_small_pages(shape: tuple[int, ...]) -> np.ndarray:
    """A zeroed uint16 array in anonymous memory the kernel hands out page by page as it is
    first written. numpy asks for transparent huge pages for large arrays: a slot's first token
    then zeroed a 2 MiB page per layer for K and for V (on a 2-vCPU VM, 8 slots' first step took
    1.1-1.8 s, most of a node's warm start, and the RSS grew by a page per slot and layer
    whatever the context used). 4 KiB pages are faulted as positions are written (llama.cpp's
    cache, a plain allocation, does the same)."""
    count = int(np.prod(shape))
    private = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS  # the default, MAP_SHARED, would be shmem
    memory = mmap.mmap(-1, max(1, count * 2), flags=private)  # the array's base: kept with it
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # also where the system's THP setting is "always"
        memory.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(memory, dtype=np.uint16, count=count).reshape(shape)


@numba.njit(cache=True)
def store_bits(k_cache, v_cache, slot_ids, positions, k, v):
    """k_cache/v_cache (num_slots, max_ctx, num_kv_heads, head_dim) uint16 of one layer <- k, v
    (n, num_kv_heads*head_dim) uint16 at (slot_ids[t], positions[t])."""
    num_slots, max_ctx, num_kv_heads, head_dim = k_cache.shape
    for t in range(k.shape[0]):  # the engine never asks for these; a bug must not write outside
        if not (0 <= slot_ids[t] < num_slots and 0 <= positions[t] < max_ctx):
            raise IndexError("KV cache store outside the cache")
    if k.shape[1] != num_kv_heads * head_dim or v.shape != k.shape:
        raise ValueError("KV cache store: k/v width differs from the cache's")
    for t in range(k.shape[0]):
        slot, position = slot_ids[t], positions[t]
        for h in range(num_kv_heads):
            for i in range(head_dim):
                k_cache[slot, position, h, i] = k[t, h * head_dim + i]
                v_cache[slot, position, h, i] = v[t, h * head_dim + i]

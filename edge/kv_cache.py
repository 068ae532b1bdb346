"""Per-slot contiguous KV cache: each slot owns max_ctx positions of every layer."""

import numpy as np

from formats.model_config import ModelConfig
from shared.step_output import InvalidRequestError


class ContextOverflowError(InvalidRequestError):
    """A sequence would grow past its slot's context window."""


class KVCache:
    """k/v: (num_layers, num_slots, max_ctx, num_kv_heads, head_dim) float32.

    Position p of slot s holds the key/value of that sequence's token p; a slot is reused by
    simply overwriting from position 0, so freeing a slot costs nothing.
    """

    def __init__(self, config: ModelConfig, num_slots: int, max_ctx: int):
        shape = (config.num_layers, num_slots, max_ctx, config.num_kv_heads, config.head_dim)
        self.k = np.zeros(shape, dtype=np.float32)
        self.v = np.zeros(shape, dtype=np.float32)
        self.num_slots = num_slots
        self.max_ctx = max_ctx

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes

    def store(self, layer: int, slot_ids: np.ndarray, positions: np.ndarray, k: np.ndarray, v: np.ndarray):
        """k, v (n, num_kv_heads*head_dim) of tokens at (slot_ids, positions)."""
        shape = (-1, *self.k.shape[3:])
        self.k[layer, slot_ids, positions] = k.reshape(shape)
        self.v[layer, slot_ids, positions] = v.reshape(shape)

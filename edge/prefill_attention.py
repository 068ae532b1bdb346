"""Attention for long prompt chunks with BLAS: per KV head, scores = Q K^T, causal mask, softmax,
then P V — matrix products instead of the per-token loops of kernels/attention.py, which stay
the path for decode tokens and short chunks."""

import numpy as np

from edge.kernels.causal_softmax import causal_softmax

MIN_CHUNK = 16
QUERY_BLOCK = 128  # queries whose scores are taken together: later blocks see more keys


def token_runs(slot_ids: np.ndarray, positions: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) runs of consecutive positions of one slot in the flat batch."""
    runs, start = [], 0
    for index in range(1, len(slot_ids) + 1):
        if (
            index == len(slot_ids)
            or slot_ids[index] != slot_ids[start]
            or positions[index] != positions[index - 1] + 1
        ):
            runs.append((start, index))
            start = index
    return runs


def attend_chunk(
    q: np.ndarray,  # (n, num_heads*head_dim) of one slot, consecutive positions
    keys: np.ndarray,  # (length, num_kv_heads, head_dim): the slot's cache up to the chunk's last token
    values: np.ndarray,
    first_position: int,
    num_heads: int,
    scale: float,
    map_heads,
    window: int = 0,  # > 0: each query sees only the last `window` positions, itself included
) -> np.ndarray:
    n = q.shape[0]
    num_kv_heads, head_dim = keys.shape[1], keys.shape[2]
    group = num_heads // num_kv_heads
    heads = q.reshape(n, num_kv_heads, group, head_dim)
    out = np.empty((n, num_kv_heads, group, head_dim), dtype=np.float32)
    scaled_keys = keys * np.float32(scale)  # (length, num_kv_heads, head_dim)

    def one_block(job: tuple[int, int]) -> None:
        """Queries [first, first + QUERY_BLOCK) of one KV head against the keys they can see:
        past the causal diagonal (and before the window) nothing is multiplied."""
        kv, first = job
        stop = min(n, first + QUERY_BLOCK)
        key_start = max(0, first_position + first - window + 1) if window > 0 else 0
        key_stop = first_position + stop  # (exclusive) the block's last query sees itself
        count = stop - first
        queries = heads[first:stop, kv].transpose(1, 0, 2).reshape(group * count, head_dim)
        scores = queries @ scaled_keys[key_start:key_stop, kv].T  # (group*count, visible keys)
        causal_softmax(scores, first_position + first, count, window, key_start)
        attended = scores @ values[key_start:key_stop, kv]  # (group*count, head_dim)
        out[first:stop, kv] = attended.reshape(group, count, head_dim).transpose(1, 0, 2)

    jobs = [(kv, first) for kv in range(num_kv_heads) for first in range(0, n, QUERY_BLOCK)]
    list(map_heads(one_block, jobs))
    return out.reshape(n, num_heads * head_dim)

"""Attention for long prompt chunks with BLAS: per KV head, scores = Q K^T, causal mask, softmax,
then P V — matrix products instead of the per-token loops of kernels/attention.py, which stay
the path for decode tokens and short chunks."""

import numpy as np

MIN_CHUNK = 16


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
    n, length = q.shape[0], keys.shape[0]
    num_kv_heads, head_dim = keys.shape[1], keys.shape[2]
    group = num_heads // num_kv_heads
    heads = q.reshape(n, num_kv_heads, group, head_dim)
    query_positions = first_position + np.arange(n)
    key_positions = np.arange(length)[None, :]  # (1, length)
    masked = key_positions > query_positions[:, None]  # (n, length)
    if window > 0:
        masked |= key_positions <= query_positions[:, None] - window
    out = np.empty((n, num_kv_heads, group, head_dim), dtype=np.float32)

    def one_head(kv: int) -> None:
        queries = heads[:, kv].transpose(1, 0, 2).reshape(group * n, head_dim)  # (group*n, d)
        scores = (queries @ keys[:, kv].T) * scale  # (group*n, length)
        scores = scores.reshape(group, n, length)
        scores[:, masked] = -np.inf
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        out[:, kv] = (
            (scores.reshape(group * n, length) @ values[:, kv]).reshape(group, n, head_dim).transpose(1, 0, 2)
        )

    list(map_heads(one_head, range(num_kv_heads)))
    return out.reshape(n, num_heads * head_dim)

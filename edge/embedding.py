"""Embeddings from the edge engine: a prompt through the model, its final hidden states (after
the output norm) pooled as the model file says (llama.cpp's `{arch}.pooling_type`; mean when it
says nothing, as for a causal LM), L2-normalized. The prompt runs in chunks on a cache of its
own, so the slots and their cached prefixes are untouched."""

import numpy as np

from edge.kv_cache import KVCache
from formats.model_config import ModelConfig
from shared.engine import InvalidRequestError

POOLING_TYPES = {1: "mean", 2: "cls", 3: "last"}  # llama.cpp's llama_pooling_type values we pool by


def pooling_type(metadata: dict, arch: str) -> str | None:
    """ "mean", "cls" or "last"; None for a model whose file asks for no pooling or reranking."""
    value = metadata.get(f"{arch}.pooling_type")
    return "mean" if value is None else POOLING_TYPES.get(value)


def check_input(token_ids: list[int], vocab_size: int, max_tokens: int) -> None:
    if not token_ids or min(token_ids) < 0 or max(token_ids) >= vocab_size:
        raise InvalidRequestError(f"an input must be token ids in [0, {vocab_size}), at least one")
    if len(token_ids) > max_tokens:
        raise InvalidRequestError(
            f"an input of {len(token_ids)} tokens exceeds the {max_tokens} a slot holds"
        )


def embed(model, config: ModelConfig, token_ids: list[int], chunk: int, pooling: str) -> np.ndarray:
    """The pooled, normalized embedding (hidden,) f32 of one prompt."""
    if not hasattr(model, "final_hidden_states"):
        raise InvalidRequestError("embeddings need the numba backend")
    count = len(token_ids)
    cache = KVCache(config, 1, count)
    ids = np.asarray(token_ids, dtype=np.int32)
    pooled = np.zeros(config.hidden_size, dtype=np.float64)
    for start in range(0, count, chunk):
        end = min(start + chunk, count)
        positions = np.arange(start, end, dtype=np.int32)
        hidden = model.final_hidden_states(ids[start:end], np.zeros(end - start, np.int32), positions, cache)
        if pooling == "mean":
            pooled += hidden.sum(axis=0, dtype=np.float64)
        elif pooling == "cls" and start == 0:
            pooled = hidden[0].astype(np.float64)
        elif pooling == "last" and end == count:
            pooled = hidden[-1].astype(np.float64)
    if pooling == "mean":
        pooled /= count
    norm = np.linalg.norm(pooled)
    return (pooled / norm if norm > 0 else pooled).astype(np.float32)

"""The edge's second backend: the same forward contract as edge/model.py's LlamaModel, run by
onnxruntime on the graph of edge/onnx_graph.py.

`forward` takes the engine's flat multi-slot batch and runs one session call per run of
consecutive positions of one slot (a decode token or a prompt chunk), feeding that slot's cache
as the past keys/values and storing the chunk's new keys/values back into the engine's KV cache.
Embeddings are gathered by our numba kernel from the file's blocks, as in the numba backend.
"""

import numpy as np
import onnxruntime
from onnx import numpy_helper

from edge.kernels.layers import embed
from edge.kernels.weight_types import weight_types
from edge.kv_cache import KVCache
from edge.onnx_graph import build_graph
from edge.prefill_attention import token_runs
from edge.weights import ModelWeights
from formats.errors import UnsupportedModelError
from formats.model_config import ModelConfig


def _check_supported(config: ModelConfig, weights: ModelWeights) -> None:
    """What the graph (edge/onnx_graph.py) does not build is refused by name, never run without."""
    head_norms = any(layer.q_norm is not None for layer in weights.layers)
    if config.rope_dim != config.head_dim or config.q_dim != config.hidden_size or head_norms:
        raise UnsupportedModelError(
            f"the onnxruntime backend does not run {config.arch}'s per-head q/k norms, head size "
            "or partial rotary; use the numba backend"
        )
    gemma = config.has_post_norms or config.sliding_layers or config.activation != "silu"
    if gemma or config.embedding_scale != 1.0 or config.final_logit_softcap or config.attention_scale:
        raise UnsupportedModelError(
            f"the onnxruntime backend does not run {config.arch}'s post-norms, sliding window, GELU, "
            "embedding scale, attention scale or logit soft-capping; use the numba backend"
        )


class OnnxLlamaModel:
    def __init__(self, config: ModelConfig, weights: ModelWeights, num_threads: int):
        _check_supported(config, weights)
        self.config = config
        self.weights = weights
        model, initializers = build_graph(config, weights)
        model.graph.initializer.extend(numpy_helper.from_array(a, name) for name, a in initializers.items())
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = num_threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        self._outputs = ["logits"] + [
            f"new_{kind}_{layer}" for layer in range(config.num_layers) for kind in ("k", "v")
        ]

    def load_prefill_kernels(self) -> None:
        """Nothing to load: onnxruntime prepared its kernels when the session was created."""

    def forward(self, token_ids, slot_ids, positions, logits_rows, cache: KVCache) -> np.ndarray:
        """LlamaModel.forward's contract: logits (m, vocab) f32 of the batch rows `logits_rows`;
        the cache filled at (slot_ids, positions)."""
        config = self.config
        x = np.empty((len(token_ids), config.hidden_size), dtype=np.float32)  # (n, hidden)
        embedding = self.weights.token_embedding
        embed(weight_types(int(embedding.ggml_type)), embedding.data, int(embedding.ggml_type), token_ids, x)
        logits = np.empty((len(logits_rows), config.vocab_size), dtype=np.float32)  # (m, vocab)
        wanted_rows = np.asarray(logits_rows, dtype=np.int64)
        for start, end in token_runs(slot_ids, positions):
            slot, first, count = int(slot_ids[start]), int(positions[start]), end - start
            wanted = np.flatnonzero((wanted_rows >= start) & (wanted_rows < end))
            feeds = {
                "hidden": x[None, start:end],
                "position_ids": positions[None, start:end].astype(np.int64),
                "attention_bias": _causal_bias(first, count),
                "logit_index": wanted_rows[wanted] - start,
            }
            for layer in range(config.num_layers):
                past_k, past_v = cache.k[layer, slot, :first], cache.v[layer, slot, :first]  # f16 bits
                feeds[f"past_k_{layer}"] = past_k.view(np.float16).reshape(1, first, config.kv_dim)
                feeds[f"past_v_{layer}"] = past_v.view(np.float16).reshape(1, first, config.kv_dim)
            results = self.session.run(self._outputs, feeds)
            logits[wanted] = results[0][0]
            for layer in range(config.num_layers):
                new_k, new_v = results[1 + 2 * layer][0], results[2 + 2 * layer][0]  # (count, kv_dim)
                cache.store(layer, slot_ids[start:end], positions[start:end], new_k, new_v)
        return logits


def _causal_bias(first: int, count: int) -> np.ndarray:
    """(1, 1, count, first + count): chunk token i sees positions 0..first+i."""
    attended = np.arange(first + count)[None, :] <= (first + np.arange(count))[:, None]
    return np.where(attended, np.float32(0.0), np.float32(-np.inf))[None, None].astype(np.float32)

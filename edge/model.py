"""The llama-family forward pass on the GGUF weights, for a flat batch of tokens from many slots.

One call runs every new token of a step through the model together: prompt chunks and single
decode tokens of different sequences alike, each with its slot and position. Weights are read
once per call; attention reads each token's own slot of the KV cache.
"""

import numba
import numpy as np

from edge.batch_rows import BatchRows
from edge.kernels.attention import attention
from edge.kernels.decode_layer import decode_layer
from edge.kernels.layers import embed, rms_norm, rope
from edge.kernels.weight_types import weight_types
from edge.kv_cache import KVCache
from edge.linear import LinearRunner
from edge.prefill_attention import MIN_CHUNK, attend_chunk, token_runs
from edge.weights import ModelWeights
from formats.model_config import ModelConfig
from shared.numba_threads import use_numba_threads


class LlamaModel:
    """Forward pass only; sequence bookkeeping lives in the engine."""

    def __init__(self, config: ModelConfig, weights: ModelWeights, num_threads: int):
        self.config = config
        self.weights = weights
        self.num_threads = num_threads
        self.linear = LinearRunner(num_threads)
        self.inv_freq = config.inv_freq()  # (rope_dim/2,)
        self.local_inv_freq = config.local_rope().inv_freq() if config.sliding_layers else self.inv_freq
        self.scale = np.float32(config.softmax_scale)
        self.decode_layers = [
            self._decode_arguments(index, layer) for index, layer in enumerate(weights.layers)
        ]
        # whether decode steps take the fused layer, and long prompt chunks their own paths (the
        # packed product or BLAS tiles, the chunk attention): False while they compile in the
        # background on a first start (edge/background_kernels.py); the per-row kernels meanwhile
        self.fused_ready = True
        self.prefill_ready = True

    def _decode_arguments(self, index: int, layer) -> tuple | None:
        """What `decode_layer` takes for this layer, or None where it must go layer by layer:
        a weight without an integer kernel, a bias, head norms, post-norms or a non-SiLU gate."""
        config = self.config
        linears = (layer.wq, layer.wk, layer.wv, layer.wo, layer.w_gate, layer.w_up, layer.w_down)
        plain = layer.q_norm is None and layer.post_attn_norm is None and layer.post_ffn_norm is None
        if not (plain and config.activation == "silu" and LinearRunner.fusable(list(linears))):
            return None
        window = config.layer_window(index)
        inv_freq = self.local_inv_freq if window else self.inv_freq
        rotary = (inv_freq, config.num_heads, config.head_dim, config.is_neox_rope, self.scale, window)
        weights = tuple(linear.data for linear in linears)
        types = tuple(int(linear.ggml_type) for linear in linears)
        return weight_types(*types), weights, types, (layer.attn_norm, layer.ffn_norm), rotary

    def _attention(self, q, cache: KVCache, layer: int, slot_ids, positions, runs) -> np.ndarray:
        """Long chunks of one slot through BLAS; everything else through the numba kernel."""
        attended = np.empty_like(q)
        window = self.config.layer_window(layer)
        chunks = self.prefill_ready and any(end - start >= MIN_CHUNK for start, end in runs)
        if not chunks:  # decode steps (or chunk kernels not compiled yet): one kernel call
            attention(
                q,
                cache.k[layer],
                cache.v[layer],
                slot_ids,
                positions,
                self.config.num_heads,
                self.scale,
                window,
                attended,
            )
            return attended
        short = np.ones(len(q), dtype=bool)
        for start, end in runs:
            if end - start >= MIN_CHUNK:
                slot, first, last = slot_ids[start], positions[start], positions[end - 1]
                keys, values = cache.slot_f32(layer, slot, last + 1)
                attended[start:end] = attend_chunk(
                    q[start:end],
                    keys,
                    values,
                    int(first),
                    self.config.num_heads,
                    float(self.scale),
                    self.linear.map,
                    window,
                )
                short[start:end] = False
        if short.any():
            rows = np.flatnonzero(short)
            subset = np.empty((len(rows), q.shape[1]), dtype=np.float32)
            attention(
                np.ascontiguousarray(q[rows]),
                cache.k[layer],
                cache.v[layer],
                slot_ids[rows],
                positions[rows],
                self.config.num_heads,
                self.scale,
                window,
                subset,
            )
            attended[rows] = subset
        return attended

    def load_prefill_kernels(self) -> None:
        """Load (from numba's cache) the tile decoder for every weight type of this model (none
        while the prompt paths compile in the background)."""
        if not self.prefill_ready:
            return
        seen = set()
        for layer in [self.weights.token_embedding, self.weights.output, *self._linears()]:
            if layer.ggml_type not in seen:
                seen.add(layer.ggml_type)
                self.linear.warm_tiles(layer)

    def _linears(self):
        for layer in self.weights.layers:
            yield from (layer.wq, layer.wk, layer.wv, layer.wo, layer.w_gate, layer.w_up, layer.w_down)

    def forward(
        self,
        token_ids: np.ndarray,  # (n,) int32
        slot_ids: np.ndarray,  # (n,) int32
        positions: np.ndarray,  # (n,) int32
        logits_rows: np.ndarray,  # (m,) indices into the batch whose logits are wanted
        cache: KVCache,
    ) -> np.ndarray:
        """Returns logits (m, vocab) f32 and fills the cache at (slot_ids, positions)."""
        config, weights = self.config, self.weights
        x = self._residual_stream(token_ids, slot_ids, positions, cache)  # (n, hidden)
        if len(logits_rows) == 0:  # a step of prompt chunks that all end mid-prompt
            return np.empty((0, config.vocab_size), dtype=np.float32)
        last = np.ascontiguousarray(x[logits_rows])  # (m, hidden)
        rms_norm(last, weights.output_norm, config.rms_eps, last)
        logits = self.linear(weights.output, last, row_kernels=True)  # (m, vocab), each row on its own
        if config.final_logit_softcap:  # Gemma: cap * tanh(logits / cap)
            cap = np.float32(config.final_logit_softcap)
            np.multiply(np.tanh(np.divide(logits, cap, out=logits), out=logits), cap, out=logits)
        return logits

    def final_hidden_states(self, token_ids, slot_ids, positions, cache: KVCache) -> np.ndarray:
        """(n, hidden) f32 after the output norm (what embeddings pool); fills the cache."""
        x = self._residual_stream(token_ids, slot_ids, positions, cache)
        rms_norm(x, self.weights.output_norm, self.config.rms_eps, x)
        return x

    def _residual_stream(self, token_ids, slot_ids, positions, cache: KVCache) -> np.ndarray:
        """The tokens through every layer: (n, hidden) f32, before the output norm."""
        config, weights = self.config, self.weights
        use_numba_threads(self.num_threads)  # this thread's kernels on the engine's threads only
        x = np.empty((len(token_ids), config.hidden_size), dtype=np.float32)  # (n, hidden)
        embedding = weights.token_embedding
        embed(weight_types(int(embedding.ggml_type)), embedding.data, int(embedding.ggml_type), token_ids, x)
        if config.embedding_scale != 1.0:  # Gemma: by sqrt(hidden)
            x *= np.float32(config.embedding_scale)
        normed = np.empty_like(x)
        runs = token_runs(slot_ids, positions)
        batch = BatchRows(self.linear, runs, len(token_ids), tiles=self.prefill_ready)
        members = numba.get_num_threads()  # the decode layers' thread team (7 us a call: once a step)
        for index, layer in enumerate(weights.layers):
            fused = batch.uniform and self.fused_ready
            if fused and self._decode_layer(index, x, slot_ids, positions, cache, members):
                continue  # a decode-sized step: the layer in one call
            rms_norm(x, layer.attn_norm, config.rms_eps, normed)
            # q (n, num_heads*head_dim), k and v (n, num_kv_heads*head_dim)
            q, k, v = batch.many([layer.wq, layer.wk, layer.wv], normed)
            self._rotate(q, k, positions, index, layer)
            cache.store(index, slot_ids, positions, k, v)  # rounded to f16, as llama.cpp's f16 cache
            attended = self._attention(q, cache, index, slot_ids, positions, runs)
            self._add_block_output(batch, layer.wo, attended, layer.post_attn_norm, x)
            rms_norm(x, layer.ffn_norm, config.rms_eps, normed)
            activated = batch.gated(layer.w_gate, layer.w_up, normed, config.activation)  # (n, ffn)
            self._add_block_output(batch, layer.w_down, activated, layer.post_ffn_norm, x)
        return x

    def _decode_layer(self, index: int, x, slot_ids, positions, cache: KVCache, members: int) -> bool:
        """The layer by one thread team (edge/kernels/decode_layer.py), if it can take it and
        its team ran; else False, with x and the cache untouched."""
        arguments = self.decode_layers[index]
        if arguments is None:
            return False
        kinds, weights, types, norms, rotary = arguments
        k_cache, v_cache = cache.k[index], cache.v[index]
        eps = self.config.rms_eps
        return decode_layer(
            kinds, x, weights, types, norms, k_cache, v_cache, slot_ids, positions, rotary, eps, members
        )

    def warm_layer_products(self) -> None:
        """Every weight product of the layers a one-token step runs layer by layer, as the step
        runs them (the family's post-norms and activation included), once per distinct mix of
        the layers' weight types (compiled or loaded; edge/background_kernels.py runs this in its
        process while the node compiles the rest, `warm_other_kernels`)."""
        config, seen = self.config, set()
        for layer in self.weights.layers:
            linears = (layer.wq, layer.wk, layer.wv, layer.wo, layer.w_gate, layer.w_up, layer.w_down)
            types = tuple(int(linear.ggml_type) for linear in linears)
            if types in seen:
                continue
            seen.add(types)
            batch = BatchRows(self.linear, [(0, 1)], 1, tiles=False)  # one row: the per-row kernels
            residual = np.zeros((1, config.hidden_size), dtype=np.float32)  # (1, hidden)
            batch.many([layer.wq, layer.wk, layer.wv], residual)
            attended = np.zeros((1, layer.wo.in_features), dtype=np.float32)
            self._add_block_output(batch, layer.wo, attended, layer.post_attn_norm, residual)
            activated = batch.gated(layer.w_gate, layer.w_up, residual, config.activation)
            self._add_block_output(batch, layer.w_down, activated, layer.post_ffn_norm, residual)

    def warm_other_kernels(self, cache: KVCache) -> None:
        """The kernels of a one-token step other than the layers' weight products (the embedding,
        norms, RoPE, the cache store, attention, the output product), on slot 0 position 0 of
        `cache` (a real request overwrites it)."""
        config, layer = self.config, self.weights.layers[0]
        token = np.zeros(1, dtype=np.int32)  # token, slot and position ids, as the engine's steps
        x = np.empty((1, config.hidden_size), dtype=np.float32)
        embedding = self.weights.token_embedding
        embed(weight_types(int(embedding.ggml_type)), embedding.data, int(embedding.ggml_type), token, x)
        rms_norm(x, layer.attn_norm, config.rms_eps, x)
        q = np.zeros((1, layer.wq.out_features), dtype=np.float32)
        k, v = (np.zeros((1, linear.out_features), dtype=np.float32) for linear in (layer.wk, layer.wv))
        self._rotate(q, k, token, 0, layer)
        cache.store(0, token, token, k, v)
        self._attention(q, cache, 0, token, token, token_runs(token, token))
        self.linear(self.weights.output, x, row_kernels=True)

    def decode_layer_calls(self, cache: KVCache) -> list[tuple]:
        """One `decode_layer` argument tuple per distinct signature among the layers (a file
        mixing weight types has several), for a one-token step of slot 0 into `cache` (a small
        scratch cache: the arguments have the types a real decode step's have)."""
        token = np.zeros(1, dtype=np.int32)  # slot ids and positions, as the engine's steps
        x = np.zeros((1, self.config.hidden_size), dtype=np.float32)
        calls, seen = [], set()
        for index, arguments in enumerate(self.decode_layers):
            if arguments is None or arguments[0] in seen:  # the same weight types: the same code
                continue
            seen.add(arguments[0])
            kinds, weights, types, norms, rotary = arguments
            step = (cache.k[index], cache.v[index], token, token, rotary, self.config.rms_eps)
            calls.append((kinds, x, weights, types, norms, *step, numba.get_num_threads()))
        return calls

    def _rotate(self, q, k, positions, index: int, layer) -> None:
        """Per-head norms of q and k where the family has them (Qwen3, Gemma 3), then RoPE with
        the layer's frequencies (a sliding layer of Gemma 3 has its own base), in place."""
        config = self.config
        if layer.q_norm is not None:  # each head on its own, before the rotation
            for projected, weight in ((q, layer.q_norm), (k, layer.k_norm)):
                heads = projected.reshape(-1, config.head_dim)  # (n * heads, head_dim), a view
                rms_norm(heads, weight, config.rms_eps, heads)
        inv_freq = self.local_inv_freq if config.layer_window(index) else self.inv_freq
        rope(q, positions, inv_freq, config.num_heads, config.head_dim, config.is_neox_rope)
        rope(k, positions, inv_freq, config.num_kv_heads, config.head_dim, config.is_neox_rope)

    def _add_block_output(self, batch: BatchRows, linear, x, post_norm, residual) -> None:
        """residual += x @ W.T, normalized first where the family has a post-norm (Gemma)."""
        if post_norm is None:
            batch.add_into(linear, x, residual)
            return
        (out,) = batch.many([linear], x)  # (n, hidden)
        rms_norm(out, post_norm, self.config.rms_eps, out)
        residual += out

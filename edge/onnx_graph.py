"""The llama-family forward pass as an ONNX graph for onnxruntime (the edge's second backend).

One run processes a chunk of consecutive tokens of one sequence:
    inputs   hidden (1, n, hidden) f32          embeddings (gathered by our numba kernel)
             position_ids (1, n) int64
             attention_bias (1, 1, n, past + n) f32    0 where attended, -inf elsewhere (causal)
             logit_index (m,) int64               chunk rows whose logits are wanted
             past_k_{l}, past_v_{l} (1, past, kv_dim) f16   the slot's cache before the chunk
    outputs  logits (1, m, vocab) f32
             new_k_{l}, new_v_{l} (1, n, kv_dim) f32        rotated keys and values, rounded to
                                                            f16 as llama.cpp's cache keeps them
Linear layers are com.microsoft MatMulNBits over the file's quantized blocks (onnx_weights.py)
with int8 activations (accuracy_level 4), as ggml multiplies; RoPE is com.microsoft
RotaryEmbedding (interleaved pairs for llama/mistral, halves for qwen2).
"""

import numpy as np
from onnx import TensorProto, helper

from edge.onnx_weights import PackedLinear, pack_linear
from edge.weights import ModelWeights
from formats.model_config import ModelConfig

OPSET = 21
ACCURACY_LEVEL = 4  # int8 activations in MatMulNBits


class GraphBuilder:
    """Accumulates nodes and initializers; names are unique by construction."""

    def __init__(self):
        self.nodes: list = []
        self.initializers: dict[str, np.ndarray] = {}
        self._count = 0

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers[name] = value
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attributes) -> str:
        self._count += 1
        output = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [output], domain=domain, **attributes))
        return output

    def ints(self, name: str, values) -> str:
        return self.constant(name, np.asarray(values, dtype=np.int64))


def build_graph(config: ModelConfig, weights: ModelWeights):
    """-> (onnx ModelProto without initializer data, {name: array} to hand to the session)."""
    g = GraphBuilder()
    hidden, kv_dim = config.hidden_size, config.kv_dim
    heads, kv_heads, head_dim = config.num_heads, config.num_kv_heads, config.head_dim
    g.ints("heads_shape", [0, 0, heads, head_dim])
    g.ints("kv_shape", [0, 0, kv_heads, head_dim])
    g.ints("group_expand", [1, 1, heads // kv_heads, 1, 1])
    g.ints("grouped_shape", [0, heads, head_dim, -1])
    g.ints("kv_unsqueeze", [2])
    g.ints("merge_heads", [0, 0, heads * head_dim])
    g.ints("last_axis", [-1])
    g.constant("scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    g.constant("eps", np.array(config.rms_eps, dtype=np.float32))
    angles = np.arange(config.context_length, dtype=np.float64)[:, None] * config.inv_freq()[None, :]
    g.constant("cos_cache", np.cos(angles).astype(np.float32))  # (max_positions, rope_dim/2)
    g.constant("sin_cache", np.sin(angles).astype(np.float32))

    x = "hidden"
    outputs = []
    for index, layer in enumerate(weights.layers):
        p = f"l{index}"
        normed = _rms_norm(g, x, g.constant(f"{p}.attn_norm", layer.attn_norm))
        q = _rope(g, _linear(g, f"{p}.q", pack_linear(layer.wq), normed), config, heads)
        k = _rope(g, _linear(g, f"{p}.k", pack_linear(layer.wk), normed), config, kv_heads)
        v = _linear(g, f"{p}.v", pack_linear(layer.wv), normed)
        new_k, new_v = (
            g.op("Cast", [g.op("Cast", [t], to=TensorProto.FLOAT16)], to=TensorProto.FLOAT) for t in (k, v)
        )
        outputs += [_rename(g, new_k, f"new_k_{index}"), _rename(g, new_v, f"new_v_{index}")]
        past_k, past_v = (g.op("Cast", [f"past_{kind}_{index}"], to=TensorProto.FLOAT) for kind in "kv")
        keys = g.op("Concat", [past_k, f"new_k_{index}"], axis=1)  # (1, T, kv_dim)
        values = g.op("Concat", [past_v, f"new_v_{index}"], axis=1)
        attended = _attention(g, q, keys, values)
        x = g.op("Add", [x, _linear(g, f"{p}.o", pack_linear(layer.wo), attended)])
        normed = _rms_norm(g, x, g.constant(f"{p}.ffn_norm", layer.ffn_norm))
        gate = _linear(g, f"{p}.gate", pack_linear(layer.w_gate), normed)
        up = _linear(g, f"{p}.up", pack_linear(layer.w_up), normed)
        activated = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up])
        x = g.op("Add", [x, _linear(g, f"{p}.down", pack_linear(layer.w_down), activated)])
    last = g.op("Gather", [x, "logit_index"], axis=1)  # (1, m, hidden)
    normed = _rms_norm(g, last, g.constant("output_norm", weights.output_norm))
    _rename(g, _linear(g, "output", pack_linear(weights.output), normed), "logits")

    float_input = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("hidden", float_input, [1, "n", hidden]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "n"]),
        helper.make_tensor_value_info("attention_bias", float_input, [1, 1, "n", "total"]),
        helper.make_tensor_value_info("logit_index", TensorProto.INT64, ["m"]),
    ]
    for index in range(config.num_layers):
        for kind in ("k", "v"):
            inputs.append(
                helper.make_tensor_value_info(
                    f"past_{kind}_{index}", TensorProto.FLOAT16, [1, "past", kv_dim]
                )
            )
    graph_outputs = [helper.make_tensor_value_info("logits", float_input, [1, "m", config.vocab_size])]
    graph_outputs += [helper.make_tensor_value_info(name, float_input, [1, "n", kv_dim]) for name in outputs]
    graph = helper.make_graph(g.nodes, "hybridgw_edge_llama", inputs, graph_outputs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 10
    return model, g.initializers


def _rename(g: GraphBuilder, tensor: str, name: str) -> str:
    g.nodes.append(helper.make_node("Identity", [tensor], [name]))
    return name


def _rms_norm(g: GraphBuilder, x: str, weight: str) -> str:
    mean_square = g.op("ReduceMean", [g.op("Mul", [x, x]), "last_axis"], keepdims=1)
    inverse = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [mean_square, "eps"])])])
    return g.op("Mul", [g.op("Mul", [x, inverse]), weight])


def _linear(g: GraphBuilder, name: str, packed: PackedLinear, x: str) -> str:
    """x (1, n, K) -> (1, n, N)."""
    if packed.bits == 0:
        y = g.op("MatMul", [x, g.constant(f"{name}.weight", packed.blocks)])
    else:
        inputs = [x, g.constant(f"{name}.blocks", packed.blocks), g.constant(f"{name}.scales", packed.scales)]
        y = g.op(
            "MatMulNBits",
            inputs,
            domain="com.microsoft",
            K=packed.in_features,
            N=packed.out_features,
            bits=packed.bits,
            block_size=32,
            accuracy_level=ACCURACY_LEVEL,
        )
    if packed.minimums is not None:  # Q4_1: + blocksum(x) @ (m + 8d).T
        block_shape = g.ints(f"{name}.block_shape", [0, 0, packed.in_features // 32, 32])
        sums = g.op("ReduceSum", [g.op("Reshape", [x, block_shape]), "last_axis"], keepdims=0)
        y = g.op("Add", [y, g.op("MatMul", [sums, g.constant(f"{name}.minimums", packed.minimums)])])
    if packed.bias is not None:
        y = g.op("Add", [y, g.constant(f"{name}.bias", packed.bias)])
    return y


def _rope(g: GraphBuilder, x: str, config: ModelConfig, num_heads: int) -> str:
    return g.op(
        "RotaryEmbedding",
        [x, "position_ids", "cos_cache", "sin_cache"],
        domain="com.microsoft",
        interleaved=0 if config.is_neox_rope else 1,
        num_heads=num_heads,
        rotary_embedding_dim=config.rope_dim,
    )


def _attention(g: GraphBuilder, q: str, keys: str, values: str) -> str:
    """q (1, n, heads*d); keys/values (1, T, kv_heads*d) -> (1, n, heads*d), grouped-query."""
    query = g.op("Transpose", [g.op("Reshape", [q, "heads_shape"])], perm=[0, 2, 1, 3])  # (1, H, n, d)

    def grouped(tensor: str, perm: list[int]) -> str:  # (1, T, kv*d) -> (1, H, ., .)
        per_head = g.op("Transpose", [g.op("Reshape", [tensor, "kv_shape"])], perm=perm)
        expanded = g.op("Expand", [g.op("Unsqueeze", [per_head, "kv_unsqueeze"]), "group_expand"])
        return g.op("Reshape", [expanded, "grouped_shape"])

    keys_t = grouped(keys, [0, 2, 3, 1])  # (1, H, d, T)
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [query, keys_t]), "scale"]), "attention_bias"])
    weights = g.op("Softmax", [scores], axis=-1)  # (1, H, n, T)
    values_t = g.op("Transpose", [grouped(values, [0, 2, 3, 1])], perm=[0, 1, 3, 2])  # (1, H, T, d)
    attended = g.op("Transpose", [g.op("MatMul", [weights, values_t])], perm=[0, 2, 1, 3])  # (1, n, H, d)
    return g.op("Reshape", [attended, "merge_heads"])

"""y = x @ W.T on the integer path for decode-sized inputs: activations quantized once per call
(Q8_0/Q8_1 blocks of 32 for the 32-element weight types, Q8_K blocks of 256 for the K-quants),
rows split across threads; each weight block is decoded once for up to ROWS_AT_ONCE activation
rows, and every activation row's result is the same whatever rows it is batched with."""

import math

import numpy as np
from numba import njit, prange
from numba.extending import overload

from edge.kernels.activation_quant import quantize_q8_k_rows, quantize_q8_rows
from edge.kernels.dequant_blocks import Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, Q5_K, Q6_K, Q8_0, check_kind
from edge.kernels.int8_dot import (
    BLOCK_BYTES,
    ROWS_AT_ONCE,
    dot_q4_0_q8,
    dot_q4_0_q8_rows,
    dot_q4_1_q8,
    dot_q4_1_q8_rows,
    dot_q5_0_q8,
    dot_q5_0_q8_rows,
    dot_q5_1_q8,
    dot_q5_1_q8_rows,
    dot_q8_0_q8,
    dot_q8_0_q8_rows,
)
from edge.kernels.kquant_dot import (
    SUPER_BLOCK_BYTES,
    dot_q4_k_q8_k,
    dot_q4_k_q8_k_rows,
    dot_q5_k_q8_k,
    dot_q5_k_q8_k_rows,
    dot_q6_k_q8_k,
    dot_q6_k_q8_k_rows,
)
from edge.kernels.weight_types import named, type_switch
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType

INT8_TYPES = frozenset(BLOCK_BYTES) | frozenset(SUPER_BLOCK_BYTES)
_ROWS_PER_TASK = 16


@njit(cache=True, inline="always")
def _is_k_quant(ggml_type):
    return ggml_type in (Q4_K, Q5_K, Q6_K)


# (ggml type id,) -> elements / bytes of one block, for the integer types (0 elsewhere)
_BLOCK_ELEMENTS = np.zeros(max(INT8_TYPES) + 1, np.int64)
_BLOCK_BYTES = np.zeros(max(INT8_TYPES) + 1, np.int64)
for _type in INT8_TYPES:
    _BLOCK_ELEMENTS[_type] = BLOCK_GEOMETRY[GGMLType(_type)].block_size
    _BLOCK_BYTES[_type] = BLOCK_GEOMETRY[GGMLType(_type)].type_size


@njit(cache=True, inline="always")
def _block(ggml_type):
    """(elements, bytes) of one block of the type."""
    return _BLOCK_ELEMENTS[ggml_type], _BLOCK_BYTES[ggml_type]


@njit(inline="always")
def _q8_blocks(q8, q8_k):
    return q8


@njit(inline="always")
def _q8_k_blocks(q8, q8_k):
    return q8_k


def _task_loop(dot_one, dot_rows, activation_blocks, type_name: str):
    """The products of one weight type over a task's rows, its kernels called directly: a type
    test per row, with every type's kernel inlined beside the others, ran them at ~60% speed."""

    def task_loop(w, q8, q8_k, start, stop, into, column, accumulate):
        """into[:, column + r - start] = (or +=) weight rows start..stop times every activation
        row: ROWS_AT_ONCE activation rows per pass over a weight row, the rest one by one on
        views made once for the task."""
        xq, xd, xs = activation_blocks(q8, q8_k)
        n = xq.shape[0]
        t = 0
        while t + ROWS_AT_ONCE <= n:
            for r in range(start, stop):
                values = dot_rows(w[r], xq, xd, xs, t)
                c = column + r - start
                for i in range(ROWS_AT_ONCE):
                    into[t + i, c] = into[t + i, c] + values[i] if accumulate else values[i]
            t += ROWS_AT_ONCE
        while t < n:
            x_row, d_row, s_row = xq[t], xd[t], xs[t]
            for r in range(start, stop):
                value = dot_one(w[r], x_row, d_row, s_row, 0)[0]
                c = column + r - start
                into[t, c] = into[t, c] + value if accumulate else value
            t += 1

    return njit(named(task_loop, f"task_loop_{type_name}"))


_TASK_LOOPS = {
    Q4_0: _task_loop(dot_q4_0_q8, dot_q4_0_q8_rows, _q8_blocks, "q4_0"),
    Q4_1: _task_loop(dot_q4_1_q8, dot_q4_1_q8_rows, _q8_blocks, "q4_1"),
    Q5_0: _task_loop(dot_q5_0_q8, dot_q5_0_q8_rows, _q8_blocks, "q5_0"),
    Q5_1: _task_loop(dot_q5_1_q8, dot_q5_1_q8_rows, _q8_blocks, "q5_1"),
    Q8_0: _task_loop(dot_q8_0_q8, dot_q8_0_q8_rows, _q8_blocks, "q8_0"),
    Q4_K: _task_loop(dot_q4_k_q8_k, dot_q4_k_q8_k_rows, _q8_k_blocks, "q4_k"),
    Q5_K: _task_loop(dot_q5_k_q8_k, dot_q5_k_q8_k_rows, _q8_k_blocks, "q5_k"),
    Q6_K: _task_loop(dot_q6_k_q8_k, dot_q6_k_q8_k_rows, _q8_k_blocks, "q6_k"),
}


def task_products(kinds, w, ggml_type, q8, q8_k, start, stop, into, column, accumulate):
    """into[:, column + r - start] = (or +=) weight rows start..stop times every activation row,
    by the weight's type, one of the set `kinds` (weight_types.py; only its loops are compiled):
    the type is tested once per task, not once per row. In jitted code only."""
    raise TypeError("task_products runs in jitted code only")


@overload(task_products, inline="always")
def _task_products(kinds, w, ggml_type, q8, q8_k, start, stop, into, column, accumulate):
    switch = type_switch(_TASK_LOOPS, kinds.ids, "task_loop")

    def products(kinds, w, ggml_type, q8, q8_k, start, stop, into, column, accumulate):
        # cast, so that a caller's constants (literal types) do not compile the loops again
        switch(ggml_type, w, q8, q8_k, start, stop, into, np.int64(column), np.bool_(accumulate))

    return named(products, f"task_products_{'_'.join(map(str, kinds.ids))}")


@njit(cache=True, inline="always")
def check_shapes(w, ggml_type, k, out, n):
    """Rows of the right size for the activations (the intrinsics read k/block blocks per row)."""
    elements, block_bytes = _block(ggml_type)
    if k % elements != 0 or w.shape[1] != (k // elements) * block_bytes:
        raise ValueError("matmul_q8: weight rows and activations disagree in size")
    if out.shape != (n, w.shape[0]):
        raise ValueError("matmul_q8: output of the wrong shape")


@njit(cache=True, inline="always")
def activation_blocks(n, k, with_k_blocks):
    """Empty buffers of ggml's int8 activation blocks for n rows of k: Q8_0/Q8_1 (xq, xd, xs)
    and, when a K-quant weight needs them (else empty), Q8_K (kq, kd, bsums)."""
    if k % 32 != 0:
        raise ValueError("matmul_q8: activations must come in blocks of 32")
    xq = np.empty((n, k), np.int8)
    xd, xs = np.empty((n, k // 32), np.float32), np.empty((n, k // 32), np.float32)
    super_blocks = k // 256 if with_k_blocks else 0
    kq = np.empty((n, super_blocks * 256), np.int8)
    kd, bsums = np.empty((n, super_blocks), np.float32), np.empty((n, super_blocks * 16), np.int32)
    return (xq, xd, xs), (kq, kd, bsums)


@njit(cache=True, inline="always")
def quantize_rows(x, q8, q8_k, first, stop):
    """Rows first..stop-1 of x (n, k) f32 into the blocks of `activation_blocks`."""
    quantize_q8_rows(x, q8[0], q8[1], q8[2], first, stop)
    if q8_k[0].shape[1]:
        quantize_q8_k_rows(x, q8_k[0], q8_k[1], q8_k[2], first, stop)


@njit(cache=True, inline="always")
def _quantized(x, with_k_blocks):
    """x (n, k) f32 -> ggml's int8 activation blocks, computed once per call."""
    n, k = x.shape
    q8, q8_k = activation_blocks(n, k, with_k_blocks)
    quantize_rows(x, q8, q8_k, 0, n)
    return q8, q8_k


@njit(cache=True, inline="always")
def task_count(rows):
    """Tasks of _ROWS_PER_TASK weight rows (the unit threads share) of a weight."""
    return (rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK


@njit(cache=True, inline="always")
def group_task(kinds, weights, ggml_types, first_task, q8, q8_k, outs, accumulate, task):
    """One task of a group of weights: weight i owns tasks [first_task[i], first_task[i+1])."""
    i = 0
    while task >= first_task[i + 1]:
        i += 1
    w, ggml_type, out = weights[i], ggml_types[i], outs[i]
    start = (task - first_task[i]) * _ROWS_PER_TASK
    stop = min(w.shape[0], start + _ROWS_PER_TASK)
    task_products(kinds, w, ggml_type, q8, q8_k, start, stop, out, start, accumulate)


@njit(cache=True, inline="always")
def group_tasks(kinds, weights, ggml_types, k, outs):
    """first_task (count+1,) of a group, after checking every weight against the input width,
    and whether any weight is a K-quant."""
    n, count = outs[0].shape[0], len(weights)
    first_task = np.zeros(count + 1, np.int64)
    with_k_blocks = False
    for i in range(count):
        check_kind(kinds, ggml_types[i])
        check_shapes(weights[i], ggml_types[i], k, outs[i], n)
        with_k_blocks = with_k_blocks or _is_k_quant(ggml_types[i])
        first_task[i + 1] = first_task[i] + task_count(weights[i].shape[0])
    return first_task, with_k_blocks


@njit(cache=True, parallel=True)
def matmul_q8_group(kinds, weights, ggml_types, x, outs, accumulate):
    """Weights of the integer types on the same input in one parallel pass (one layer, or q, k
    and v): weights (rows_i, row_bytes_i) uint8 and outs (n, rows_i) f32 are tuples of arrays,
    ggml_types a tuple of ints (kinds: their weight_types), x (n, k) f32, quantized here to
    int8 blocks as ggml does.
    outs[i] = x @ weights[i].T, or += with `accumulate` (a residual connection)."""
    first_task, with_k_blocks = group_tasks(kinds, weights, ggml_types, x.shape[1], outs)
    q8, q8_k = _quantized(x, with_k_blocks)
    for task in prange(first_task[len(weights)]):
        _group_task(kinds, weights, ggml_types, first_task, q8, q8_k, outs, accumulate, np.int64(task))


@njit(cache=True)
def _group_task(kinds, weights, ggml_types, first_task, q8, q8_k, outs, accumulate, task):
    """group_task as a function of its own: numba types and compiles a parallel loop's body
    twice, so the body is this one call."""
    group_task(kinds, weights, ggml_types, first_task, q8, q8_k, outs, accumulate, task)


@njit(cache=True, parallel=True)
def gated_q8(kinds, w_gate, gate_type, w_up, up_type, x, out):
    """SwiGLU's first half in one pass: out (n, ffn) = silu(x @ W_gate.T) * (x @ W_up.T)."""
    n, k = x.shape
    check_kind(kinds, gate_type)
    check_kind(kinds, up_type)
    check_shapes(w_gate, gate_type, k, out, n)
    check_shapes(w_up, up_type, k, out, n)
    q8, q8_k = _quantized(x, _is_k_quant(gate_type) or _is_k_quant(up_type))
    for task in prange(task_count(w_gate.shape[0])):
        gated_task(kinds, w_gate, gate_type, w_up, up_type, q8, q8_k, out, np.int64(task))


@njit(cache=True)  # no fastmath: it would let LLVM reorder the inlined row sums
def gated_task(kinds, w_gate, gate_type, w_up, up_type, q8, q8_k, out, task):
    """One task of gated_q8: its weight rows of both products, then the gate."""
    n, rows = out.shape[0], w_gate.shape[0]
    start, stop = task * _ROWS_PER_TASK, min(rows, (task + 1) * _ROWS_PER_TASK)
    up = np.empty((n, stop - start), np.float32)  # (n, rows of the task)
    task_products(kinds, w_gate, gate_type, q8, q8_k, start, stop, out, start, False)
    task_products(kinds, w_up, up_type, q8, q8_k, start, stop, up, 0, False)
    for t in range(n):
        for r in range(start, stop):
            g = out[t, r]
            out[t, r] = g / (np.float32(1.0) + np.float32(math.exp(-g))) * up[t, r - start]

"""Quantization to Q4_K, Q5_K and Q6_K, following ggml's reference (quantize_row_q*_K_ref).

Vectorised over blocks: every sub-block's scale is searched at once. Q4_K/Q5_K: per sub-block of
32, a scale and a minimum fitted by weighted least squares over 21 candidate grids
(make_qkx2_quants, weights av|x| + |x|), then both quantized to 6 bits against the block's
largest; Q6_K: per sub-block of 16, a symmetric scale from 19 candidates weighted by x²
(make_qx_quants), quantized to int8 against the largest. Sums run in float32 in numpy's order, so
a block can differ from llama.cpp's in a last-bit tie; the files load and run in llama.cpp.
"""

import numpy as np

GROUP_MAX_EPS = np.float32(1e-15)
F32 = np.float32


def _nearest(x: np.ndarray) -> np.ndarray:
    """ggml's nearest_int: round half to even."""
    return np.rint(x).astype(np.int32)


def _f16(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16)


def _symmetric_scales(x: np.ndarray, nmax: int) -> tuple[np.ndarray, np.ndarray]:
    """make_qx_quants(rmse_type=1) on rows x (m, n): (scale (m,), L (m, n) in 0..2*nmax-1)."""
    rows = np.arange(len(x))
    extreme = x[rows, np.abs(x).argmax(axis=1)]  # (m,) the signed largest value
    empty = np.abs(extreme) < GROUP_MAX_EPS
    extreme = np.where(empty, F32(1), extreme)
    weights = x * x

    def trial(iscale):
        levels = np.clip(_nearest(iscale[:, None] * x), -nmax, nmax - 1)
        return levels, (weights * x * levels).sum(1, dtype=F32), (weights * levels * levels).sum(1, dtype=F32)

    levels, sum_lx, sum_l2 = trial((F32(-nmax) / extreme).astype(F32))
    scale = np.where(sum_l2 > 0, sum_lx / np.where(sum_l2 > 0, sum_l2, 1), F32(0)).astype(F32)
    best = scale * sum_lx
    for step in range(-9, 10):
        if step == 0:
            continue
        candidate, sx, s2 = trial((-(F32(nmax) + F32(0.1) * F32(step)) / extreme).astype(F32))
        better = (s2 > 0) & (sx * sx > best * s2)
        levels = np.where(better[:, None], candidate, levels)
        scale = np.where(better, sx / np.where(s2 > 0, s2, 1), scale).astype(F32)
        best = np.where(better, scale * sx, best)
    return np.where(empty, F32(0), scale), np.where(empty[:, None], 0, levels + nmax)


def _asymmetric_scales(x: np.ndarray, nmax: int) -> tuple[np.ndarray, np.ndarray]:
    """make_qkx2_quants(rmin=-1, rdelta=0.1, nstep=20) on rows x (m, 32), weights av_x + |x|:
    (scale (m,), min (m,) >= 0 to subtract)."""
    weights = (np.sqrt((x * x).sum(1, dtype=F32) / F32(x.shape[1]))[:, None] + np.abs(x)).astype(F32)
    low = np.minimum(x.min(1), F32(0))
    high = x.max(1)
    flat = high == low
    span = np.where(flat, F32(1), high - low)
    sum_w, sum_x = weights.sum(1, dtype=F32), (weights * x).sum(1, dtype=F32)

    def error(scale, minimum, levels):
        diff = scale[:, None] * levels + minimum[:, None] - x
        return (weights * diff * diff).sum(1, dtype=F32)

    iscale = (F32(nmax) / span).astype(F32)
    scale = (F32(1) / iscale).astype(F32)
    levels = np.clip(_nearest(iscale[:, None] * (x - low[:, None])), 0, nmax)
    best_error, minimum = error(scale, low, levels), low
    for step in range(21):
        iscale = ((F32(-1) + F32(0.1) * F32(step) + F32(nmax)) / span).astype(F32)
        trial = np.clip(_nearest(iscale[:, None] * (x - low[:, None])), 0, nmax).astype(F32)
        sum_l, sum_l2 = (weights * trial).sum(1, dtype=F32), (weights * trial * trial).sum(1, dtype=F32)
        sum_xl = (weights * trial * x).sum(1, dtype=F32)
        det = sum_w * sum_l2 - sum_l * sum_l
        safe = np.where(det > 0, det, F32(1))
        this_scale = (sum_w * sum_xl - sum_x * sum_l) / safe
        this_min = (sum_l2 * sum_x - sum_l * sum_xl) / safe
        clamp = this_min > 0
        this_scale = np.where(clamp, sum_xl / np.where(sum_l2 > 0, sum_l2, 1), this_scale).astype(F32)
        this_min = np.where(clamp, F32(0), this_min).astype(F32)
        this_error = error(this_scale, this_min, trial)
        better = (det > 0) & (this_error < best_error)
        best_error = np.where(better, this_error, best_error)
        scale, minimum = np.where(better, this_scale, scale), np.where(better, this_min, minimum)
    return np.where(flat, F32(0), scale).astype(F32), np.where(flat, -low, -minimum).astype(F32)


def _pack_scales_k4(scale_levels: np.ndarray, min_levels: np.ndarray) -> np.ndarray:
    """(nb, 8) 6-bit scales and mins -> (nb, 12) bytes, ggml's get_scale_min_k4 layout."""
    ls, lm = scale_levels.astype(np.uint8), min_levels.astype(np.uint8)
    packed = np.zeros((len(ls), 12), np.uint8)
    packed[:, 0:4], packed[:, 4:8] = ls[:, :4], lm[:, :4]
    packed[:, 8:12] = (ls[:, 4:] & 15) | ((lm[:, 4:] & 15) << 4)
    packed[:, 0:4] |= (ls[:, 4:] >> 4) << 6
    packed[:, 4:8] |= (lm[:, 4:] >> 4) << 6
    return packed


def _k4_levels(blocks: np.ndarray, nmax: int):
    """Q4_K / Q5_K shared part: (d f16, dmin f16, packed scales (nb, 12), L (nb, 256) 0..nmax)."""
    nb = len(blocks)
    sub = blocks.reshape(nb * 8, 32)
    scales, mins = (v.reshape(nb, 8) for v in _asymmetric_scales(sub, nmax))
    max_scale, max_min = scales.max(1), mins.max(1)
    inv_scale = np.where(max_scale > 0, F32(63) / np.where(max_scale > 0, max_scale, 1), F32(0))
    inv_min = np.where(max_min > 0, F32(63) / np.where(max_min > 0, max_min, 1), F32(0))
    ls = np.minimum(_nearest(inv_scale[:, None] * scales), 63)
    lm = np.minimum(_nearest(inv_min[:, None] * mins), 63)
    d, dmin = _f16(max_scale / F32(63)), _f16(max_min / F32(63))
    sub_d = d.astype(F32)[:, None] * ls.astype(F32)  # (nb, 8)
    sub_m = dmin.astype(F32)[:, None] * lm.astype(F32)
    safe = np.where(sub_d != 0, sub_d, F32(1))
    x = blocks.reshape(nb, 8, 32)
    levels = np.clip(_nearest((x + sub_m[..., None]) / safe[..., None]), 0, nmax)
    levels = np.where((sub_d != 0)[..., None], levels, 0).reshape(nb, 256)
    return d, dmin, _pack_scales_k4(ls, lm), levels


def quantize_q4_k(blocks: np.ndarray) -> np.ndarray:
    """(nb, 256) f32 -> (nb, 144): [d][dmin][12 scale bytes][128 bytes of nibbles]."""
    d, dmin, scales, levels = _k4_levels(blocks, 15)
    pairs = levels.reshape(len(blocks), 4, 2, 32).astype(np.uint8)
    nibbles = (pairs[:, :, 0] | (pairs[:, :, 1] << 4)).reshape(len(blocks), 128)
    return np.concatenate([d[:, None].view(np.uint8), dmin[:, None].view(np.uint8), scales, nibbles], axis=1)


def quantize_q5_k(blocks: np.ndarray) -> np.ndarray:
    """(nb, 256) f32 -> (nb, 176): [d][dmin][12 scale bytes][32 bytes qh][128 bytes of nibbles]."""
    d, dmin, scales, levels = _k4_levels(blocks, 31)
    pairs = levels.reshape(len(blocks), 4, 2, 32).astype(np.uint8)  # (nb, pair, low/high half, j)
    nibbles = ((pairs[:, :, 0] & 15) | ((pairs[:, :, 1] & 15) << 4)).reshape(len(blocks), 128)
    high = np.zeros((len(blocks), 32), np.uint8)
    for pair in range(4):
        high |= (pairs[:, pair, 0] >> 4) << (2 * pair)
        high |= (pairs[:, pair, 1] >> 4) << (2 * pair + 1)
    return np.concatenate([d[:, None].view(np.uint8), dmin[:, None].view(np.uint8), scales, high, nibbles], 1)


def quantize_q6_k(blocks: np.ndarray) -> np.ndarray:
    """(nb, 256) f32 -> (nb, 210): [128 bytes ql][64 bytes qh][16 int8 scales][d]."""
    nb = len(blocks)
    scales, levels = (v.reshape(nb, 16, -1) for v in _symmetric_scales(blocks.reshape(nb * 16, 16), 32))
    scales = scales.reshape(nb, 16)
    rows = np.arange(nb)
    max_scale = scales[rows, np.abs(scales).argmax(1)]
    empty = np.abs(max_scale) < GROUP_MAX_EPS
    iscale = np.where(empty, F32(0), F32(-128) / np.where(empty, F32(1), max_scale)).astype(F32)
    d = _f16(np.where(empty, F32(0), F32(1) / np.where(empty, F32(1), iscale)))
    sc = np.minimum(_nearest(iscale[:, None] * scales), 127).astype(np.int8)
    sub_d = d.astype(F32)[:, None] * sc.astype(F32)  # (nb, 16)
    safe = np.where(sub_d != 0, sub_d, F32(1))
    requantized = np.clip(_nearest(blocks.reshape(nb, 16, 16) / safe[..., None]), -32, 31) + 32
    levels = np.where((sub_d != 0)[..., None], requantized, levels).reshape(nb, 2, 4, 32).astype(np.uint8)
    levels = np.where(empty[:, None, None, None], 0, levels).astype(np.uint8)
    low = levels & 15  # (nb, half, part, j)
    ql = np.concatenate([low[:, :, 0] | (low[:, :, 2] << 4), low[:, :, 1] | (low[:, :, 3] << 4)], axis=2)
    top = levels >> 4
    qh = top[:, :, 0] | (top[:, :, 1] << 2) | (top[:, :, 2] << 4) | (top[:, :, 3] << 6)  # (nb, half, 32)
    return np.concatenate(
        [ql.reshape(nb, 128), qh.reshape(nb, 64), sc.view(np.uint8), d[:, None].view(np.uint8)], 1
    )

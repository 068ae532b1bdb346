"""Reference (numpy) dequantization of the 256-element K-quant super-blocks: Q2_K..Q6_K.

Each takes (n_blocks, type_size) uint8 and returns (n_blocks, 256) float32, following ggml's
`dequantize_row_q*_K` operation by operation so results are bit-exact. Layouts (bytes, in order):
  Q2_K: scales[16] qs[64] d dmin           Q3_K: hmask[32] qs[64] scales[12] d
  Q4_K: d dmin scales[12] qs[128]          Q5_K: d dmin scales[12] qh[32] qs[128]
  Q6_K: ql[128] qh[64] scales[16] d
"""

import numpy as np

from formats.ggml_types import QK_K


def _f16(raw: np.ndarray) -> np.ndarray:
    """(n_blocks, 2) uint8 -> (n_blocks, 1) float32."""
    return np.ascontiguousarray(raw).view(np.float16).astype(np.float32)


def _shifted(packed: np.ndarray, shifts: list[int], group: int, mask: int) -> np.ndarray:
    """Unpack bit fields: (n, k*group) -> (n, k, len(shifts), group); field s of byte b is
    (b >> s) & mask. This is how every K-quant interleaves its low and high bits."""
    n = packed.shape[0]
    grouped = packed.reshape(n, -1, 1, group)
    return (grouped >> np.array(shifts, dtype=np.uint8).reshape(1, 1, -1, 1)) & np.uint8(mask)


def unpack_scale_min_k4(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 12 packed bytes of Q4_K/Q5_K -> eight 6-bit scales and eight 6-bit mins, (n, 8) each."""
    low, high, mixed = scales[:, 0:4], scales[:, 4:8], scales[:, 8:12]
    scale = np.concatenate([low & 0x3F, (mixed & 0x0F) | ((low >> 2) & 0x30)], axis=1)
    minimum = np.concatenate([high & 0x3F, (mixed >> 4) | ((high >> 2) & 0x30)], axis=1)
    return scale, minimum


def dequantize_q2_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    scales, qs = blocks[:, 0:16], blocks[:, 16:80]
    d, dmin = _f16(blocks[:, 80:82]), _f16(blocks[:, 82:84])
    dl = (d * (scales & 0x0F).astype(np.float32)).reshape(n, 16, 1)
    ml = (dmin * (scales >> 4).astype(np.float32)).reshape(n, 16, 1)
    q = _shifted(qs, [0, 2, 4, 6], 32, 0x03).reshape(n, 16, 16).astype(np.float32)
    return (dl * q - ml).reshape(n, QK_K)


def dequantize_q3_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    hmask, qs, packed, d = blocks[:, 0:32], blocks[:, 32:96], blocks[:, 96:108], _f16(blocks[:, 108:110])
    low = _shifted(packed[:, 0:8], [0, 4], 8, 0x0F).reshape(n, 16)
    high = _shifted(packed[:, 8:12], [0, 2, 4, 6], 4, 0x03).reshape(n, 16)
    scale = ((low | (high << 4)).astype(np.int8) - np.int8(32)).astype(np.float32)
    dl = (d * scale).reshape(n, 16, 1)
    ql = _shifted(qs, [0, 2, 4, 6], 32, 0x03).reshape(n, 16, 16)
    # A cleared hmask bit means "subtract 4".
    qh = _shifted(hmask, list(range(8)), 32, 0x01).reshape(n, 16, 16) ^ np.uint8(1)
    q = (ql.astype(np.int8) - (qh << 2).astype(np.int8)).astype(np.float32)
    return (dl * q).reshape(n, QK_K)


def dequantize_q4_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    scale, minimum = unpack_scale_min_k4(blocks[:, 4:16])
    dl = (d * scale.astype(np.float32)).reshape(n, 8, 1)
    ml = (dmin * minimum.astype(np.float32)).reshape(n, 8, 1)
    q = _shifted(blocks[:, 16:144], [0, 4], 32, 0x0F).reshape(n, 8, 32).astype(np.float32)
    return (dl * q - ml).reshape(n, QK_K)


def dequantize_q5_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    scale, minimum = unpack_scale_min_k4(blocks[:, 4:16])
    dl = (d * scale.astype(np.float32)).reshape(n, 8, 1)
    ml = (dmin * minimum.astype(np.float32)).reshape(n, 8, 1)
    ql = _shifted(blocks[:, 48:176], [0, 4], 32, 0x0F).reshape(n, 8, 32)
    qh = _shifted(blocks[:, 16:48], list(range(8)), 32, 0x01).reshape(n, 8, 32)
    q = (ql | (qh << 4)).astype(np.float32)
    return (dl * q - ml).reshape(n, QK_K)


def dequantize_q6_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    ql, qh = blocks[:, 0:128], blocks[:, 128:192]
    scale = np.ascontiguousarray(blocks[:, 192:208]).view(np.int8).astype(np.float32)
    dl = (_f16(blocks[:, 208:210]) * scale).reshape(n, 16, 1)
    low = _shifted(ql, [0, 4], 64, 0x0F).reshape(n, 8, 32)
    high = _shifted(qh, [0, 2, 4, 6], 32, 0x03).reshape(n, 8, 32)
    q = ((low | (high << 4)).astype(np.int8) - np.int8(32)).reshape(n, 16, 16).astype(np.float32)
    return (dl * q).reshape(n, QK_K)

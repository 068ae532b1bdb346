"""The softmax of a prompt chunk's attention scores, each row over its own visible keys only.

The BLAS path of prefill attention (edge/prefill_attention.py) multiplies all of a chunk's queries
by all of its keys; a query at position p sees keys [p - window + 1, p] (or [0, p]). numpy's
masking (a boolean index of -inf), max, exp, sum and division made five passes over the
(heads * n, length) scores, with temporaries, and took a third of a 512-token prefill of the
demo model; this is one pass per row over its visible span, the rest set to 0.

It runs on the tile threads (one query block of one KV head each), so it is serial: a numba
parallel kernel called from a thread other than the first makes that thread a master of its own
OpenMP team, and with more OpenMP threads than cores libgomp turns every team's spin-waits into
sleeps, for the rest of the process: after one prefill every decode step ran 45% slower.
"""

import numba
import numpy as np

from shared.fast_math import fast_exp


@numba.njit(cache=True, nogil=True, fastmath=True)
def causal_softmax(scores, first_position, queries, window, first_key):
    """scores (heads * queries, keys) f32 of keys at positions first_key.., row h * queries + i
    for the query at position first_position + i, in place: softmax over the keys at positions
    [lo, p] (lo = p - window + 1 when window > 0, else 0), zero elsewhere."""
    rows, length = scores.shape
    for row in range(rows):
        position = first_position + row % queries
        stop = min(position + 1 - first_key, length)
        start = max(0, position + 1 - window - first_key) if window > 0 else 0
        values = scores[row]
        peak = -np.inf
        for key in range(start, stop):
            peak = max(peak, values[key])
        total = np.float32(0.0)
        for key in range(start, stop):
            values[key] = fast_exp(values[key] - peak)
            total += values[key]
        inverse = np.float32(1.0) / total
        for key in range(start, stop):
            values[key] *= inverse
        values[:start] = 0.0
        values[stop:] = 0.0

"""How long numba's OpenMP threads spin before they sleep, set before libgomp loads.

Two kinds of parallel work share the cores. Decode steps launch one thread team per layer, a few
microseconds apart: a worker that slept between launches costs a futex wake each time (about
80 us on a VM, 2.5 ms a step of the demo model). Prefill runs BLAS tiles on Python threads between
short numba kernels: a worker still spinning after such a kernel takes a core from the tiles.
libgomp's default (300,000 spins, milliseconds) gave decode its speed and cost prefill 25%;
10,000 spins (tens of microseconds) outlasts the gap between layers and is over before a tile
needs the core: decode and a 512-token prefill of the demo model both at their best, measured.

A user's own GOMP_SPINCOUNT or OMP_WAIT_POLICY is left as it is.
"""

import os

SPIN_COUNT = 10_000


def set_openmp_spin() -> None:
    """Read by libgomp when it loads (numba's first parallel launch), so call at import."""
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)

"""How many threads the calling thread's numba parallel loops use.

numba's count is per calling thread and starts at NUMBA_NUM_THREADS (every core), whatever an
engine was told: an edge node started with `--threads 1` beside the cloud engine on the other
core (`hybridgw up` on two cores) still split every decode layer and prompt chunk over both
cores (measured: 1.7-2.0 cores busy), and each engine's steps waited on the threads the other
had preempted. Each engine calls `use_numba_threads` on the thread that runs its kernels.
"""

import numba


def use_numba_threads(wanted: int) -> None:
    """This thread's numba loops on `wanted` threads (at most numba's pool; 7 us when unchanged)."""
    wanted = max(1, min(wanted, numba.config.NUMBA_NUM_THREADS))
    if numba.get_num_threads() != wanted:
        numba.set_num_threads(wanted)

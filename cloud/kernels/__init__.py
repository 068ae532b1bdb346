"""Compiled CPU kernels of the cloud engine (numba), called through cloud/attention_backend.py.

Their parallel loops run on numba's threads, which know nothing of `torch.set_num_threads`: a
worker told `--threads 1` beside an edge node on the other core (`hybridgw up` on two cores)
still split every norm, rotation and attention over two threads, and each waited on the one the
edge had preempted (the engine alone beside one busy core: 39 tokens/s, 55 with one numba
thread). `follow_torch_threads` gives the calling thread's numba loops torch's count.
"""

import torch

from shared.numba_cache import use_kernel_cache
from shared.numba_threads import use_numba_threads

use_kernel_cache()


def follow_torch_threads() -> None:
    """numba's parallel kernels launched from this thread use as many threads as torch (numba's
    setting is per calling thread: the engine's step thread calls this before each step)."""
    use_numba_threads(torch.get_num_threads())

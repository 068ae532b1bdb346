"""The low-level CPU kernels of the cloud engine (numba), called from cloud/layers: the paged
attention kernel (paged_attention) and its SIMD inner loops (lanes), bfloat16 loads and stores
(bfloat16), and how torch tensors reach a kernel (arrays). A layer's own elementwise kernel
lives beside its torch formulation in cloud/layers. Importing this package points numba's cache
at the compiled sources' digest (shared/numba_cache.py) before any kernel is compiled.

May import: torch, numpy, numba, shared; nothing else of cloud.

Their parallel loops run on numba's threads, which know nothing of `torch.set_num_threads`: a
worker told `--threads 1` beside an edge node on the other core (`hybridgw up` on two cores)
still split every norm, rotation and attention over two threads, and each waited on the one the
edge had preempted (the engine alone beside one busy core: 39 tokens/s, 55 with one numba
thread). Nor can torch's count be read back: both count per calling thread in the same OpenMP
runtime, and numba starting its pool on the engine's thread sets that thread's count to every
core, so under `hybridgw up` the "one-thread" engine's oneDNN matmuls, attention and norms ran
on two threads (a spinning OpenMP worker beside the gateway's loop and the edge: three busy
threads on two cores). `use_cpu_threads` sets both to the engine's own count before each step.
"""

import torch

from shared.numba_cache import use_kernel_cache
from shared.numba_threads import use_numba_threads

use_kernel_cache()


def use_cpu_threads(num_threads: int) -> None:
    """The calling thread's torch ops and numba loops on `num_threads` threads; numba's first,
    since starting its pool resets the thread's OpenMP count that torch reads."""
    use_numba_threads(num_threads)
    if torch.get_num_threads() != num_threads:
        torch.set_num_threads(num_threads)

"""Freed memory stays in the engine's process instead of going back to the kernel every step.

glibc's malloc serves every block over 128 KiB with its own mmap and returns it with munmap when
freed, so each step's large arrays (logits, activations, the sampler's float64 rows) come back as
fresh pages, each 4 KiB one a page fault on first touch: on a KVM guest 6 ms for one 3 MiB
array, three times the exp over it. llama.cpp avoids this with compute buffers
allocated once; vLLM's CPU build asks for tcmalloc in LD_PRELOAD. We raise glibc's own thresholds
at engine start: blocks up to 32 MiB (glibc's ceiling) come from the heap, and up to
`TRIM_THRESHOLD` of free heap stays mapped for the next step. Measured on a 2-core KVM guest, alternating
runs: the edge engine's 8-slot decode 1.11x as fast, the cloud engine's 16-request batch 1.07-1.16x.
"""

import ctypes
import ctypes.util
import logging
import platform

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest accepted value (DEFAULT_MMAP_THRESHOLD_MAX, 64-bit)
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> bool:
    """Raises glibc malloc's mmap and trim thresholds for this process; returns whether it did
    (False off glibc, where another allocator's own defaults stay)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    applied = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    applied = libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and applied
    if not applied:
        logger.warning("mallopt refused the allocator thresholds; freed memory goes back each step")
    return applied

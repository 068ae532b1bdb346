"""The allocator thresholds: applied on glibc, and a freed step-sized array's pages are reused by
the next one instead of being faulted in afresh."""

import platform
import resource

import numpy as np

from shared.allocator import keep_freed_memory

ON_GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
SHAPE = (8, 49152)  # one edge step's float64 sampler rows, 3 MiB: mmap'd under glibc's defaults
PAGES = SHAPE[0] * SHAPE[1] * 8 // 4096


def test_thresholds_apply_on_glibc_only():
    assert keep_freed_memory() is ON_GLIBC


def test_a_freed_step_sized_array_is_not_faulted_in_again():
    assert keep_freed_memory(), "the engines run on glibc (Linux, the Debian images)"
    np.ones(SHAPE)  # the first step maps the pages (faults counted on this thread only)
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range(4):
        np.ones(SHAPE)  # written all through, then freed
    faults = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before
    assert faults < PAGES // 4, f"{faults} page faults for 4 arrays of {PAGES} pages"

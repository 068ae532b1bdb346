"""A team of numba threads that share phases of work and meet at spin barriers, as ggml's threads
do within a graph: one parallel launch serves many dependent phases.

A parallel loop (`prange`) in numba costs about 4 us to launch and join; a decode layer has five
such loops. In a team, `prange(members)` starts once and its members pass barriers, each a
counter the members add to atomically and spin on (a fraction of a microsecond).

Members must run at the same time. If the runtime serialized them (a nested parallel region, a
team larger than the threads), the first member to arrive would wait forever for the others; so
the first barrier is `join`: after JOIN_TIMEOUT_CYCLES of waiting it cancels the team, every
member returns before writing any output, and the caller runs its layer-by-layer path instead.
"""

import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from edge.kernels.vector_ir import call_intrinsic

X86 = platform.machine().lower() in ("x86_64", "amd64")
JOIN_TIMEOUT_CYCLES = 1 << 27  # ~40 ms at 3 GHz: members on separate threads meet in microseconds
CANCELLED = 1 << 40  # subtracted from the counter: every later arrival sees it negative
YIELD_AFTER_SPINS = 1 << 12  # then give the core away between spins (a sibling may be descheduled)


def _counter_pointer(context, builder, signature, args):
    array = context.make_array(signature.args[0])(context, builder, args[0])
    return builder.gep(array.data, [args[1]])


@intrinsic
def atomic_add(typingctx, counters, index, value):
    """counters (k,) int64: counters[index] += value, sequentially consistent; returns the old value."""
    signature = types.int64(counters, types.intp, types.int64)

    def codegen(context, builder, sig, args):
        return builder.atomic_rmw("add", _counter_pointer(context, builder, sig, args), args[2], "seq_cst")

    return signature, codegen


@intrinsic
def atomic_load(typingctx, counters, index):
    """counters[index], read with acquire ordering (never hoisted out of a spin loop)."""
    signature = types.int64(counters, types.intp)

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_counter_pointer(context, builder, sig, args), "acquire", 8)

    return signature, codegen


@intrinsic
def compare_exchange(typingctx, counters, index, expected, new):
    """counters[index] = new if it equals expected (atomically); whether it did."""
    signature = types.boolean(counters, types.intp, types.int64, types.int64)

    def codegen(context, builder, sig, args):
        pointer = _counter_pointer(context, builder, sig, args)
        result = builder.cmpxchg(pointer, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(result, 1)

    return signature, codegen


@intrinsic
def spin_pause(typingctx):
    """x86's `pause` (spin-wait hint); nothing elsewhere."""

    def codegen(context, builder, sig, args):
        if X86:
            call_intrinsic(builder, "llvm.x86.sse2.pause", ir.VoidType(), [])
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def sched_yield(typingctx):
    """libc's sched_yield(): let another thread run on this core (linked by name, so a cached
    kernel keeps no process-specific address)."""

    def codegen(context, builder, sig, args):
        call_intrinsic(builder, "sched_yield", ir.IntType(32), [])
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def cycle_counter(typingctx):
    """The CPU's time-stamp counter on x86; elsewhere 0 (the join then times out by spins)."""

    def codegen(context, builder, sig, args):
        if X86:
            return call_intrinsic(builder, "llvm.readcyclecounter", ir.IntType(64), [])
        return ir.Constant(ir.IntType(64), 0)

    return types.int64(), codegen


@njit(cache=True)
def _spin(spins):
    spin_pause()
    if spins > YIELD_AFTER_SPINS:
        sched_yield()
    return spins + 1


@njit(cache=True)
def join(counters, members):
    """The first barrier: True once every member has arrived; False if the team is cancelled
    (this member timed out waiting, or arrived after another did). Nothing may be written to
    shared outputs before it."""
    if atomic_add(counters, 0, 1) < 0:
        return False
    started, spins = cycle_counter(), 0
    while True:
        seen = atomic_load(counters, 0)
        if seen >= members or seen < 0:
            return seen >= members
        waited = cycle_counter() - started if X86 else spins * 64
        if waited > JOIN_TIMEOUT_CYCLES and compare_exchange(counters, 0, seen, seen - CANCELLED):
            return False
        spins = _spin(spins)


@njit(cache=True)
def barrier(counters, members, generation):
    """Barrier number `generation` (2, 3, ... after `join`): wait until every member passed it."""
    atomic_add(counters, 0, 1)
    spins = 0
    while atomic_load(counters, 0) < generation * members:
        spins = _spin(spins)


@njit(cache=True, inline="always")
def share(count, member, members):
    """This member's share of `count` items: range(first, stop)."""
    per_member = (count + members - 1) // members
    return min(count, member * per_member), min(count, (member + 1) * per_member)


def new_counters() -> np.ndarray:
    return np.zeros(1, np.int64)

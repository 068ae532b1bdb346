"""The weight types a kernel call can meet, carried in the call's numba type, so that a kernel is
compiled with the code of those types only.

A kernel that takes `ggml_type` as a plain integer must compile every type's code behind a runtime
test: on a first start (an empty kernel cache) the fused decode layer and the embedding gather
spent most of their two minutes compiling K-quant, 5-bit and float decoders a Q4_1 file never
uses. Here a call passes `weight_types(*types)` beside the integers: its numba type names the set,
so every kernel is compiled once per set of types a file holds (one signature per combination,
cached like any other), and `type_switch` dispatches at run time among that set's cases only.
The integers still choose the case, so a layer that mixes types (Q4_K_M's Q6_K rows) runs each
weight with its own code.
"""

import functools
import os
import types as types_module
from collections.abc import Callable

from numba import njit
from numba.core import types
from numba.extending import NativeValue, models, register_model, typeof_impl, unbox


class WeightTypes:
    """A set of ggml type ids (sorted, unique); make one with `weight_types`."""

    __slots__ = ("ids",)

    def __init__(self, ids: tuple[int, ...]):
        self.ids = ids

    def __repr__(self) -> str:
        return f"WeightTypes{self.ids}"


# Every kernel type: what `weight_types` gives for any call when HYBRIDGW_KERNEL_TYPES=all. A test
# suite that runs every type compiles each kernel once with all of them (eight specializations of
# the decode layer cost it 70 s each); a node compiles for its file's types only.
# F32 F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K BF16
ALL_KERNEL_TYPES = (0, 1, 2, 3, 6, 7, 8, 12, 13, 14, 30)
KERNEL_TYPES_ENV = "HYBRIDGW_KERNEL_TYPES"


@functools.cache
def weight_types(*ggml_types: int) -> WeightTypes:
    """The set of these types (one object per set, so a call costs a dictionary lookup)."""
    if os.environ.get(KERNEL_TYPES_ENV) == "all":
        return WeightTypes(ALL_KERNEL_TYPES)
    return WeightTypes(tuple(sorted({int(t) for t in ggml_types})))


class WeightTypesType(types.Type):
    """numba's type of a WeightTypes: the set is part of the type, so of every signature."""

    def __init__(self, ids: tuple[int, ...]):
        self.ids = ids
        super().__init__(name=f"WeightTypes{ids}")


@typeof_impl.register(WeightTypes)
def _typeof(value: WeightTypes, context) -> WeightTypesType:
    return WeightTypesType(value.ids)


register_model(WeightTypesType)(models.OpaqueModel)  # no data: everything is in the type


@unbox(WeightTypesType)
def _unbox(typ, obj, c) -> NativeValue:
    return NativeValue(c.context.get_constant_null(typ))


def named(function: Callable, qualname: str) -> Callable:
    """`function` under a qualname of its own, for a function made at run time (a closure, an
    overload's implementation, a second compilation of the same code). numba names a compiled
    function by its qualname and a per-process counter; a cached kernel carries the names of
    what it calls, so two different closures under one qualname, compiled in different processes
    (a node and its background compiler, or runs in another order), could be linked one in place
    of the other when both load from the cache: a name must say what the code is."""
    code, defaults, closure = function.__code__, function.__defaults__, function.__closure__
    copy = types_module.FunctionType(code, function.__globals__, function.__name__, defaults, closure)
    copy.__qualname__ = qualname
    return copy


def type_switch(cases: dict[int, Callable], ids: tuple[int, ...], name: str) -> Callable:
    """A jitted `switch(ggml_type, *args)` that runs `cases[ggml_type](*args)` for the types
    `ids` that have a case (the last without a test: callers check the type belongs to the set
    first). `name`: the table's, unique among tables (the switch's qualname says which cases)."""
    chain = tuple((i, cases[i]) for i in ids if i in cases)
    if not chain:
        raise ValueError(f"no kernel for any of the weight types {ids}")
    return _switch(name, chain)


@functools.cache
def _switch(name: str, chain: tuple) -> Callable:
    (first, case), rest = chain[0], chain[1:]
    qualname = f"{name}_switch_" + "_".join(str(ggml_type) for ggml_type, _ in chain)
    if not rest:

        def last(ggml_type, *args):
            return case(*args)

        return njit(named(last, qualname))
    others = _switch(name, rest)

    def switch(ggml_type, *args):
        if ggml_type == first:
            return case(*args)
        return others(ggml_type, *args)

    return njit(named(switch, qualname))

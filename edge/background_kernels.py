"""The kernels a node can start without, compiled beside a first start instead of before it.

With an empty kernel cache most of a first start's compiling is for paths a node can do without at
first: the fused decode layer (edge/kernels/decode_layer.py; on the demo model 35 of the 47 s a
one-core start spent compiling) and the prompt paths for long chunks (the packed integer product
or the BLAS tiles, the chunk attention). So a node does not wait for them: it serves with the
per-row kernels, every row through them. A separate process (`python -m
edge.kernel_compile_process`) compiles into numba's cache on another core: first, beside the
node, the weight products of those per-row kernels (the node compiles the others meanwhile and
then waits for its line), then, niced, the prompt paths and the fused layer. When it is done, a
side thread loads the fused layer from the cache (a fraction of a second; the prompt kernels load
on their first call) and steps take both paths from the next step on. The fused layer gives the
layer-by-layer path's tokens bit for bit (tests/edge/test_decode_layer.py).

A warm start finds the fused layer cached and the process's mark that it compiled the rest (a
file per model's kernels, written last: a family with no fused layer, Gemma's, has no fused
signature to find) and takes every path from its first step. If the process fails, the node
compiles what it lacks itself (slower, the same result) and logs why.
"""

import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from numba import typeof
from numba.core.typing.typeof import Purpose

from edge.kernels.decode_layer import decode_layer
from edge.kernels.weight_types import KERNEL_TYPES_ENV
from edge.kv_cache import KVCache
from edge.model import LlamaModel
from shared.numba_cache import kernel_cache_dir

logger = logging.getLogger("hybridgw.edge")
PROCESS_MODULE = "edge.kernel_compile_process"
PRODUCTS_DONE = "products compiled"  # the process's line once the weight products are cached


def signature(arguments: tuple) -> tuple:
    """numba's types of a call's arguments, as the dispatcher types them."""
    return tuple(typeof(value, Purpose.argument) for value in arguments)


def decode_layer_signatures(model: LlamaModel) -> list[tuple]:
    """Every signature the model's fused layers take (one per set of weight types)."""
    scratch = KVCache(model.config, 1, 1)  # one slot, one position: only its arrays' types matter
    return [signature(call) for call in model.decode_layer_calls(scratch)]


def prepared_mark(model: LlamaModel) -> Path:
    """The file the process writes once everything the model's node runs is in the cache: one
    per model config, weight types and kernel type setting, under this version's cache."""
    weights = model.weights
    linears = [weights.token_embedding, weights.output]
    norms = []
    for layer in weights.layers:
        linears += [layer.wq, layer.wk, layer.wv, layer.wo, layer.w_gate, layer.w_up, layer.w_down]
        optional = (layer.q_norm, layer.post_attn_norm, layer.post_ffn_norm)
        norms.append(tuple(norm is None for norm in optional))
    kinds = [(int(linear.ggml_type), linear.bias is None, linear.data.dtype.str) for linear in linears]
    described = repr((model.config, kinds, norms, os.environ.get(KERNEL_TYPES_ENV, "")))
    return kernel_cache_dir() / "prepared" / hashlib.sha256(described.encode()).hexdigest()[:24]


def mark_prepared(model: LlamaModel) -> None:
    """Written by the process last (a read-only cache, warmed elsewhere, keeps its own marks)."""
    mark = prepared_mark(model)
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError as error:
        logger.warning(json.dumps({"event": "kernel_mark_not_written", "error": str(error)}))


def _cached(layer_signature: tuple) -> bool:
    """Whether decode_layer is compiled for the signature in memory or in numba's cache: the
    lookup Dispatcher.compile makes first, without compiling on a miss (numba has no public call)."""
    if layer_signature in decode_layer.overloads:
        return True
    return decode_layer._cache.load_overload(layer_signature, decode_layer.targetctx) is not None


class BackgroundKernels:
    """Makes the model's fused layer and long-prompt paths ready, now or in the background."""

    def __init__(self, model: LlamaModel, model_path: str, beside: bool = True):
        """`beside`: the process compiles the layers' products while the node compiles the rest
        (a node with the machine's cores to itself); False: the node compiles all of its own
        kernels and the process only the rest, niced (a node sharing the cores: `hybridgw up`
        gives the edge half of them and loads the cloud engine on the other half meanwhile)."""
        self.beside = beside
        self.model = model
        self.model_path = model_path
        self.signatures = decode_layer_signatures(model)
        self.process: subprocess.Popen | None = None
        self.thread: threading.Thread | None = None
        self.products = threading.Event()  # the process compiled the weight products (or ended)
        self.closed = False

    def start(self) -> bool:
        """True if everything is cached (loaded now); else starts compiling it in the background,
        the model on its always-compiled paths meanwhile, and returns False."""
        if prepared_mark(self.model).exists() and all(map(_cached, self.signatures)):
            self._load()
            return True
        self.model.fused_ready = self.model.prefill_ready = False
        # its stdin stays open while this process lives: the child exits when it reads its end
        self.process = subprocess.Popen(
            [sys.executable, "-m", PROCESS_MODULE, self.model_path, *(["--products"] if self.beside else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.thread = threading.Thread(target=self._await_process, name="background-kernels", daemon=True)
        self.thread.start()
        logger.info(json.dumps({"event": "compiling_in_background", "kernels": list(self.pending)}))
        return False

    def await_products(self, timeout: float | None = None) -> None:
        """Until the process has the weight products in the cache (or ended): the node's first
        step then loads them instead of compiling them a second time."""
        if self.process is not None and self.beside:
            self.products.wait(timeout)

    def release(self) -> None:
        """The node's own kernels are in the cache: the process may start (it would compile them
        a second time beside the node otherwise)."""
        if self.process is not None and self.process.poll() is None:
            try:
                self.process.stdin.write("go\n")
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError):  # it exited: _await_process says why
                pass

    @property
    def pending(self) -> tuple[str, ...]:
        """What still compiles (the node's readiness and stats show it)."""
        fused = () if self.model.fused_ready or not self.signatures else ("decode_layer",)
        return fused + (() if self.model.prefill_ready else ("prefill",))

    def _await_process(self) -> None:
        started = time.perf_counter()
        said = []  # read line by line, not by communicate(): that would close its stdin
        for line in self.process.stdout:
            if line.strip() == PRODUCTS_DONE:
                self.products.set()
            said = [*said[-2:], line.strip()]
        self.products.set()  # ended: whatever it did not compile, the node compiles itself
        if self.process.wait() != 0 and self.closed:  # stopped with the node: nothing to load
            return
        if self.process.returncode != 0:
            tail = " | ".join(said)
            failed = {"event": "background_compile_failed", "code": self.process.returncode, "error": tail}
            logger.warning(json.dumps(failed))
        self._load()  # from the cache the process filled (or compiled here, if it could not)
        waited = round(time.perf_counter() - started, 1)
        logger.info(json.dumps({"event": "kernels_ready", "after_s": waited}))

    def _load(self) -> None:
        for layer_signature in self.signatures:
            decode_layer.compile(layer_signature)
        self.model.prefill_ready = self.model.fused_ready = True

    def wait(self, timeout: float | None = None) -> bool:
        """Whether everything is loaded, waiting up to `timeout` seconds for the background."""
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.pending

    def close(self) -> None:
        """Stops a compiling process (a node shutting down)."""
        self.closed = True
        if self.process is not None and self.process.poll() is None:
            self.process.kill()

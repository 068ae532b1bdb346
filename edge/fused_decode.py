"""The fused decode layer (edge/kernels/decode_layer.py) compiled beside a first start, not before it.

With an empty kernel cache it is most of a first start's compiling: on the demo model 35 of the
47 s a one-core start spent compiling. So a node does not wait for it. A separate process
(`python -m edge.fused_decode`) compiles it into numba's cache on another core while this one
compiles the layer-by-layer kernels and then serves with them; once the process is done, a side
thread loads the layer from the cache (a fraction of a second) and decode steps take it from the
next step on. The two paths give bit-identical results (tests/edge/test_decode_layer.py), so a
request may switch between them mid-stream. A warm start finds the layer cached and takes it from
the first step. If the process fails, the side thread compiles the layer itself (slower, the
same result) and logs why.
"""

import json
import logging
import os
import subprocess
import sys
import threading
import time

from numba import typeof
from numba.core.typing.typeof import Purpose

from edge.kernels.decode_layer import decode_layer
from edge.kv_cache import KVCache
from edge.model import LlamaModel

logger = logging.getLogger("hybridgw.edge")


def _signature(arguments: tuple) -> tuple:
    """numba's types of a call's arguments, as the dispatcher types them."""
    return tuple(typeof(value, Purpose.argument) for value in arguments)


def _cached(signature: tuple) -> bool:
    """Whether decode_layer is compiled for `signature` in memory or in numba's cache: the lookup
    Dispatcher.compile makes first, without compiling on a miss (numba has no public call)."""
    if signature in decode_layer.overloads:
        return True
    return decode_layer._cache.load_overload(signature, decode_layer.targetctx) is not None


def _scratch_cache(model: LlamaModel) -> KVCache:
    """A one-slot, one-position cache: the signatures' KV arrays (nothing is run on it)."""
    return KVCache(model.config, 1, 1)


class FusedDecode:
    """Makes `model.fused_ready` true once the fused layer is loaded, now or in the background."""

    def __init__(self, model: LlamaModel, model_path: str):
        self.model = model
        self.model_path = model_path
        self.signatures = [_signature(call) for call in model.decode_layer_calls(_scratch_cache(model))]
        self.process: subprocess.Popen | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> bool:
        """Loads the layer now if it is cached (True); else starts compiling it in the background
        and returns False (decode steps go layer by layer until it is loaded)."""
        if all(_cached(signature) for signature in self.signatures):
            self._load()
            return True
        self.model.fused_ready = False
        command = [sys.executable, "-m", "edge.fused_decode", self.model_path]
        # stdin stays open while this process lives: the child exits when it reads its end
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.thread = threading.Thread(target=self._await_process, name="fused-decode", daemon=True)
        self.thread.start()
        logger.info('{"event": "compiling_in_background", "kernel": "decode_layer"}')
        return False

    def _await_process(self) -> None:
        started = time.perf_counter()
        errors = self.process.stderr.read()  # not communicate(): that would close its stdin
        if self.process.wait() != 0:
            tail = " | ".join(errors.strip().splitlines()[-3:])
            logger.warning(
                json.dumps(
                    {"event": "background_compile_failed", "code": self.process.returncode, "error": tail}
                )
            )
        self._load()  # from the cache the process filled (or compiled here, if it could not)
        waited = round(time.perf_counter() - started, 1)
        logger.info(json.dumps({"event": "fused_decode_ready", "after_s": waited}))

    def _load(self) -> None:
        for signature in self.signatures:
            decode_layer.compile(signature)
        self.model.fused_ready = True

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the layer is loaded, waiting up to `timeout` seconds for the background."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.model.fused_ready

    def close(self) -> None:
        """Stops a compiling process (a node shutting down)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()


def _compile(model_path: str) -> None:
    """In the child: every signature of the file's decode layers into numba's cache."""
    from edge.weights import ModelWeights
    from formats.gguf_reader import GGUFReader
    from formats.model_config import ModelConfig

    reader = GGUFReader(model_path)
    config = ModelConfig.from_reader(reader)
    model = LlamaModel(config, ModelWeights.from_reader(reader, config), num_threads=1)
    for call in model.decode_layer_calls(_scratch_cache(model)):
        decode_layer.compile(_signature(call))


def _exit_with_parent() -> None:
    sys.stdin.read()  # EOF: the parent died (or stopped us)
    os._exit(1)


if __name__ == "__main__":
    os.nice(19)  # the cores go to what the node needs first: its own kernels, then requests
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    _compile(sys.argv[1])

"""`python -m edge.kernel_compile_process MODEL.gguf`: the process edge/background_kernels.py starts
on a first start. It waits for the node's word that the kernels the node compiles itself are in
the cache (a line on stdin), then compiles what the node runs without meanwhile, niced: the long
prompt paths, by running the serving preparation of a small engine, and the fused decode layer
last (its presence in the cache tells a later start that everything is there). It exits when its
stdin closes (the node stopped or died)."""

import os
import select
import sys
import threading

from edge.background_kernels import decode_layer_signatures
from edge.engine import EdgeEngine, EngineConfig
from edge.kernels.decode_layer import decode_layer

WORD_TIMEOUT_S = 120


def compile_kernels(model_path: str) -> None:
    engine = EdgeEngine(EngineConfig(model_path, num_slots=2, context_size=128, num_threads=1))
    engine.model.fused_ready = False  # the prompt paths first; the fused layer last, by signature
    engine.prepare_to_serve()
    for layer_signature in decode_layer_signatures(engine.model):
        decode_layer.compile(layer_signature)
    engine.close()


def _exit_with_parent() -> None:
    sys.stdin.read()  # EOF: the node stopped us, or died
    os._exit(1)


def _await_word() -> bool:
    """The node's line (its own kernels are cached), or False if it is gone. After
    WORD_TIMEOUT_S without one (a library user who never warms up) it starts anyway."""
    ready, _, _ = select.select([sys.stdin], [], [], WORD_TIMEOUT_S)
    return not ready or bool(sys.stdin.readline())


if __name__ == "__main__":
    os.nice(19)  # the cores go to what the node needs first: its own kernels, then its requests
    if not _await_word():
        sys.exit(1)
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    compile_kernels(sys.argv[1])

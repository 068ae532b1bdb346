"""`python -m edge.kernel_compile_process MODEL.gguf`: the process edge/background_kernels.py starts
on a first start. First, beside the node, it compiles the weight products of a one-token step
(the node compiles the step's other kernels meanwhile, then waits for its line on stdout). Then,
niced, once the node's word comes on stdin (its first steps ran), it compiles what the node
serves without: the long prompt paths, by running the serving preparation of a small engine,
and the fused decode layer, then its mark that everything is there (edge/background_kernels.py).
It exits when its stdin closes (the node stopped or died)."""

import os
import select
import sys
import threading

from edge.background_kernels import PRODUCTS_DONE, decode_layer_signatures, mark_prepared
from edge.engine import EdgeEngine, EngineConfig
from edge.kernels.decode_layer import decode_layer
from edge.model import LlamaModel
from edge.weights import ModelWeights
from formats.gguf_reader import GGUFReader
from formats.model_config import ModelConfig

WORD_TIMEOUT_S = 120


def compile_products(model_path: str) -> None:
    """Its share of the node's own kernels, beside the node: the layers' weight products (the
    model alone: an engine's tokenizer and grammar tables would delay it)."""
    reader = GGUFReader(model_path)
    config = ModelConfig.from_reader(reader)
    LlamaModel(config, ModelWeights.from_reader(reader, config), num_threads=1).warm_layer_products()
    print(PRODUCTS_DONE, flush=True)  # the node runs its first step now


def compile_the_rest(model_path: str) -> None:
    """What the node serves without: the long-prompt paths, then the fused layer."""
    engine = EdgeEngine(EngineConfig(model_path, num_slots=2, context_size=128, num_threads=1))
    engine.model.fused_ready = False  # the prompt paths first; the fused layer last, by signature
    engine.prepare_to_serve()
    for layer_signature in decode_layer_signatures(engine.model):
        decode_layer.compile(layer_signature)
    mark_prepared(engine.model)  # last: a later start finds everything
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
    if "--products" in sys.argv:
        compile_products(sys.argv[1])
    os.nice(19)  # the rest waits for the cores: the node's requests come first
    if not _await_word():
        sys.exit(1)
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    compile_the_rest(sys.argv[1])

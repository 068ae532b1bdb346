"""The cloud engine: paged KV cache and continuous batching in PyTorch, vLLM-style.

Laid out as nano-vllm and vLLM are, each folder importing only the ones below it:

    worker/   the Redis worker: request streams in, fenced reply streams out (no engine import:
              it runs any shared.async_engine.AsyncEngine)
    engine/   LLMEngine and the offline LLM: scheduler, block manager, requests, input batch,
              model runner, step budget and cost model
    models/   the llama family's forward, its weights and its vocabulary
    layers/   each layer once: its torch formulation and its CPU kernel call side by side
    kernels/  the low-level numba kernels and how torch tensors reach them

Importing `cloud` alone does not import torch; `from cloud import LLM, SamplingParams` does.
"""

from shared.sampling import SamplingParams
from shared.structured_output import StructuredOutputsParams


def __getattr__(name: str):
    if name in ("LLM", "LLMEngine", "RequestOutput"):
        from cloud.engine import llm, llm_engine

        return {"LLM": llm.LLM, "LLMEngine": llm_engine.LLMEngine, "RequestOutput": llm.RequestOutput}[name]
    raise AttributeError(name)


__all__ = ["LLM", "LLMEngine", "RequestOutput", "SamplingParams", "StructuredOutputsParams"]

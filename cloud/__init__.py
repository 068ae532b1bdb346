"""The cloud engine: paged KV cache and continuous batching in PyTorch, vLLM-style.

Importing `cloud` alone does not import torch; `from cloud import LLM, SamplingParams` does.
"""

from shared.sampling import SamplingParams
from shared.structured_output import StructuredOutputsParams


def __getattr__(name: str):
    if name in ("LLM", "LLMEngine", "RequestOutput"):
        from cloud import llm, llm_engine

        return {"LLM": llm.LLM, "LLMEngine": llm_engine.LLMEngine, "RequestOutput": llm.RequestOutput}[name]
    raise AttributeError(name)


__all__ = ["LLM", "LLMEngine", "RequestOutput", "SamplingParams", "StructuredOutputsParams"]

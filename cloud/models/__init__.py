"""The models the cloud engine runs (vLLM's model_executor/models): the llama family's forward
over a flat batch of tokens (llama), its weights from a GGUF file or a safetensors checkpoint
(weights) and what the engine reads from its tokenizer (vocab).

May import: cloud.layers, cloud.kernels, shared, formats; never cloud.engine or cloud.worker.
"""

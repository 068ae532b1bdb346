"""The engine core (vLLM's v1 core, nano-vllm's engine/): `LLMEngine.step()` = schedule -> run
the model -> sample -> update, and the offline `LLM` API over it.

Here: the engine (llm_engine), its configuration and vLLM-style arguments (config, engine_args),
requests (request, request_fork for n > 1), the scheduler and what orders and sizes its steps
(scheduler, waiting_order, step_budget, step_cost_model, token_interval), the paged KV-cache
blocks (block_manager), the persistent batch and the model runner (input_batch, model_runner),
and the counts read into NodeStats (metrics).

May import: cloud.models, cloud.layers, cloud.kernels, shared, formats; never cloud.worker.
"""

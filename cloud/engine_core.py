"""LLMEngine as the token-streaming core the shared async loop, gRPC server and worker drive."""

from cloud.llm_engine import LLMEngine
from shared.sampling import SamplingParams
from shared.step_output import FinishReason, StepOutput
from shared.step_rates import decode_steps_field

MAX_PUBLISHED_BLOCKS = 4096  # the most recently cached; what a heartbeat carries for placement


class CloudEngineCore:
    def __init__(self, engine: LLMEngine):
        self.engine = engine

    def add_request(
        self,
        request_id: str,
        prompt_ids: list[int],
        params: SamplingParams,
        priority: int = 0,
        cache_salt: str = "",
    ) -> None:
        self.engine.add_request(
            prompt_ids, params, request_id=request_id, priority=priority, cache_salt=cache_salt
        )

    def abort(self, request_id: str) -> bool:
        return self.engine.abort_request(request_id)

    def has_work(self) -> bool:
        return self.engine.has_unfinished_requests()

    def step(self) -> list[StepOutput]:
        events = []
        for output in self.engine.step():
            reason = FinishReason(output.finish_reason) if output.finish_reason else None
            events.append(
                StepOutput(
                    output.request_id,
                    output.logprobs[-1],
                    len(output.token_ids) - 1,
                    reason,
                    len(output.prompt_token_ids),
                    output.num_cached_tokens,
                )
            )
        return events

    def close(self) -> None:
        """Nothing to release: torch frees the cache with the engine."""

    def node_stats(self) -> dict:
        metrics = self.engine.metrics.snapshot()
        config = self.engine.scheduler_config
        return {
            "kind": "cloud",
            "num_running": metrics["num_running"],
            "num_waiting": metrics["num_waiting"],
            "max_running": config.max_num_seqs,
            "kv_usage": metrics["kv_cache_usage"],
            "context_length": self.engine.max_model_len,
            "requests_total": metrics["num_finished"],
            "tokens_generated_total": metrics["num_generated_tokens"],
            "prefill_tokens_per_s": self.engine.rates.prefill_tokens_per_s,
            "decode_tokens_per_s": self.engine.rates.decode_tokens_per_s,
            "decode_steps": decode_steps_field(self.engine.rates),
            "num_waiting_prompt_tokens": self.engine.scheduler.num_waiting_prompt_tokens(),
            "cached_block_hashes": self.engine.block_manager.cached_block_hashes(MAX_PUBLISHED_BLOCKS),
            "prefix_block_size": self.engine.cache_config.block_size,
        }

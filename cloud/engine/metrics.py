"""Counts the cloud engine keeps about its requests and KV cache (read into NodeStats)."""

from cloud.engine.block_manager import BlockManager
from cloud.engine.request import Request
from cloud.engine.scheduler import Scheduler


class EngineMetrics:
    def __init__(self, scheduler: Scheduler, block_manager: BlockManager):
        self.scheduler = scheduler
        self.block_manager = block_manager
        self.num_finished = 0  # stopped, cut at length or aborted
        self.num_generated_tokens = 0

    def record_finished(self, requests: list[Request]) -> None:
        for request in requests:
            self.num_finished += 1
            self.num_generated_tokens += len(request.output_token_ids)

    @property
    def kv_cache_usage(self) -> float:
        """Fraction of blocks held by requests (cached-but-free blocks count as free)."""
        return self.block_manager.usage

    @property
    def kv_cache_fill(self) -> float:
        """Fraction of the slots in held blocks that hold a computed token (internal fragmentation)."""
        manager = self.block_manager
        allocated = sum(len(blocks) for blocks in manager.req_to_blocks.values()) * manager.block_size
        filled = sum(r.num_computed_tokens for r in self.scheduler.running)
        return filled / allocated if allocated else 0.0

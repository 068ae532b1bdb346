"""What the cloud engine reports about itself: load, KV-cache use, prefix cache, preemptions,
and per-request time to first token and inter-token latency."""

from collections import deque

from cloud.block_manager import BlockManager
from cloud.request import Request
from cloud.scheduler import Scheduler

RECENT_REQUESTS = 256


class EngineMetrics:
    def __init__(self, scheduler: Scheduler, block_manager: BlockManager):
        self.scheduler = scheduler
        self.block_manager = block_manager
        self.ttft_s: deque[float] = deque(maxlen=RECENT_REQUESTS)  # of recent finished requests
        self.itl_s: deque[float] = deque(maxlen=RECENT_REQUESTS)  # mean per recent request
        self.num_finished = 0
        self.num_generated_tokens = 0

    def record_finished(self, requests: list[Request]) -> None:
        for request in requests:
            self.num_finished += 1
            self.num_generated_tokens += len(request.output_token_ids)
            if request.first_token_time is not None:
                self.ttft_s.append(request.first_token_time - request.arrival_time)
            times = request.token_times
            if len(times) > 1:
                self.itl_s.append((times[-1] - times[0]) / (len(times) - 1))

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

    def snapshot(self) -> dict:
        manager = self.block_manager
        return {
            "num_running": len(self.scheduler.running),
            "num_waiting": len(self.scheduler.waiting),
            "kv_cache_usage": self.kv_cache_usage,
            "kv_cache_fill": self.kv_cache_fill,
            "prefix_cache_queries": manager.num_prefix_queries,
            "prefix_cache_hits": manager.num_prefix_hits,
            "num_preemptions": self.scheduler.num_preemptions,
            "num_finished": self.num_finished,
            "num_generated_tokens": self.num_generated_tokens,
            "mean_ttft_s": sum(self.ttft_s) / len(self.ttft_s) if self.ttft_s else None,
            "mean_itl_s": sum(self.itl_s) / len(self.itl_s) if self.itl_s else None,
        }

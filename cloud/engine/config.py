"""Configuration of the cloud engine: one slotted dataclass per concern, validated on creation."""

from dataclasses import dataclass


@dataclass(slots=True)
class CacheConfig:
    block_size: int = 16
    num_blocks: int = 1024
    enable_prefix_caching: bool = True

    def __post_init__(self) -> None:
        if self.block_size < 1 or self.num_blocks < 1:
            raise ValueError("block_size and num_blocks must be positive")


@dataclass(slots=True)
class SchedulerConfig:
    max_num_seqs: int = 64  # cap on running requests
    max_num_batched_tokens: int = 1024  # token budget of one step
    long_prefill_token_threshold: int = 512  # a prompt advances at most this much per step
    # "fcfs"; "priority": lower value first, then arrival; "slo": priority, then the shortest
    # prompt first, with aging (cloud/engine/waiting_order.py)
    policy: str = "fcfs"

    def __post_init__(self) -> None:
        if self.max_num_seqs < 1 or self.max_num_batched_tokens < 1:
            raise ValueError("max_num_seqs and max_num_batched_tokens must be positive")
        if self.policy not in ("fcfs", "priority", "slo"):
            raise ValueError(f"unknown scheduling policy {self.policy!r}")
        if not 1 <= self.long_prefill_token_threshold <= self.max_num_batched_tokens:
            raise ValueError("long_prefill_token_threshold must be in [1, max_num_batched_tokens]")

"""The cloud pool as the router sees it, and which worker a request goes to.

The pool is one routing target: its state sums the live workers' heartbeats. Inside it, a
request whose prompt starts with blocks a worker holds in its prefix cache goes to that worker's
direct stream (llm-d's prefix-cache-aware placement: workers publish the chained hashes of their
cached blocks, the gateway hashes the prompt the same way, shared/prefix_hash.py), while that
worker has room; every other request goes to the shared stream, where any worker takes it."""

from dataclasses import dataclass

from shared.prefix_hash import block_hashes, num_cached_blocks
from shared.proto import inference_pb2 as pb


@dataclass(slots=True)
class WorkerView:
    name: str
    cached_block_hashes: frozenset[int]
    prefix_block_size: int
    num_requests: int  # running + waiting, as of its heartbeat
    max_running: int
    num_directed: int = 0  # requests this gateway sent it directly since its heartbeat

    @property
    def has_room(self) -> bool:
        return self.num_requests + self.num_directed < self.max_running


def worker_views(name_to_heartbeat: dict[str, dict]) -> dict[str, WorkerView]:
    return {
        name: WorkerView(
            name,
            frozenset(int(h) for h in beat.get("cached_block_hashes", [])),
            int(beat.get("prefix_block_size", 0)),
            int(beat.get("num_running", 0)) + int(beat.get("num_waiting", 0)),
            int(beat.get("max_running", 0)),
        )
        for name, beat in name_to_heartbeat.items()
    }


def choose_worker(workers: dict[str, WorkerView], request: pb.GenerateRequest) -> WorkerView | None:
    """The worker with room holding the longest cached prefix of the prompt (None: no worker
    holds a full block of it, or none that does has room)."""
    best, best_blocks = None, 0
    hashes_by_block_size: dict[int, list[int]] = {}
    prompt = list(request.prompt_token_ids)
    for worker in workers.values():
        size = worker.prefix_block_size
        if not size or not worker.cached_block_hashes or not worker.has_room:
            continue
        if size not in hashes_by_block_size:
            hashes_by_block_size[size] = block_hashes(prompt, size, request.cache_salt)
        blocks = num_cached_blocks(hashes_by_block_size[size], worker.cached_block_hashes)
        if blocks > best_blocks:
            best, best_blocks = worker, blocks
    return best


def pool_stats(heartbeats: list[dict], num_queued: int) -> pb.NodeStats:
    """The workers' heartbeats as one node: counts and capacity summed (plus the requests still
    in the queue), rates averaged, and the decode table of a pool of W workers as a worker's at
    batch b / W (the pool spreads its batch over them)."""
    stats = pb.NodeStats(kind="cloud")
    for beat in heartbeats:
        stats.num_running += int(beat.get("num_running", 0))
        stats.num_waiting += int(beat.get("num_waiting", 0))
        stats.max_running += int(beat.get("max_running", 0))
        stats.num_waiting_prompt_tokens += int(beat.get("num_waiting_prompt_tokens", 0))
        stats.kv_usage = max(stats.kv_usage, float(beat.get("kv_usage", 0.0)))
    stats.num_waiting += num_queued
    stats.prefill_tokens_per_s = _mean(heartbeats, "prefill_tokens_per_s")
    stats.decode_tokens_per_s = _mean(heartbeats, "decode_tokens_per_s")
    contexts = [int(beat["context_length"]) for beat in heartbeats if beat.get("context_length")]
    stats.context_length = min(contexts, default=0)
    seconds_by_batch: dict[int, list[float]] = {}
    for beat in heartbeats:
        for step in beat.get("decode_steps", []):
            seconds_by_batch.setdefault(int(step["batch_size"]), []).append(float(step["seconds"]))
    for batch_size, seconds in sorted(seconds_by_batch.items()):
        step = stats.decode_steps.add()
        step.batch_size, step.seconds = batch_size * len(heartbeats), sum(seconds) / len(seconds)
    block_sizes = [int(beat.get("prefix_block_size", 0)) for beat in heartbeats]
    if block_sizes and block_sizes[0]:  # what any worker holds: a hit for the pool
        stats.prefix_block_size = block_sizes[0]
        held = set()
        for beat, size in zip(heartbeats, block_sizes, strict=True):
            if size == block_sizes[0]:
                held.update(int(h) for h in beat.get("cached_block_hashes", []))
        stats.cached_block_hashes.extend(held)
    return stats


def _mean(heartbeats: list[dict], name: str) -> float:
    """The workers' mean measured rate; 0 (unknown: the router assumes a default) if none has one."""
    rates = [float(beat[name]) for beat in heartbeats if beat.get(name)]
    return sum(rates) / len(rates) if rates else 0.0

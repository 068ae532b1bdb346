"""Turns a scheduler step into one batch for the model: input ids, positions, slot mapping, block
tables; runs it and returns the logits of the requests that sample this step."""

import torch

from cloud.block_manager import BlockManager
from cloud.model import LlamaModel
from cloud.paged_attention import AttentionMetadata
from cloud.scheduler import SchedulerOutput
from formats.model_config import ModelConfig


class ModelRunner:
    def __init__(self, model: LlamaModel, config: ModelConfig, num_blocks: int, block_size: int):
        self.model = model
        self.block_size = block_size
        tensor = model.embedding
        shape = (num_blocks, block_size, config.num_kv_heads, config.head_dim)
        # (num_blocks, block_size, num_kv_heads, head_dim) per layer, for K and for V
        self.kv_caches = [
            (
                torch.zeros(shape, dtype=tensor.dtype, device=tensor.device),
                torch.zeros(shape, dtype=tensor.dtype, device=tensor.device),
            )
            for _ in range(config.num_layers)
        ]
        self.device = tensor.device

    @torch.inference_mode()
    def execute_model(self, output: SchedulerOutput, block_manager: BlockManager):
        """Returns (request ids that sample, logits (R + P, vocab) float32 on the CPU, and the
        requests with prompt positions whose logprobs they ask for: (request, positions), their
        P rows following the R sampling rows in order)."""
        self._copy_blocks(output.block_copies)
        input_ids, positions, slots, starts, seq_lens, tables, sample_rows, sample_ids = (
            [],
            [],
            [],
            [0],
            [],
            [],
            [],
            [],
        )
        prompt_rows, wanted_rows = [], []
        for request in output.scheduled:
            num_new = output.num_scheduled_tokens[request.request_id]
            start = request.num_computed_tokens
            if wanted := request.prompt_logprob_positions(start, num_new):
                prompt_rows.append((request, wanted))
                wanted_rows += [len(input_ids) + p - start for p in wanted]
            table = block_manager.block_table(request.request_id)
            input_ids += request.all_token_ids[start : start + num_new]
            positions += range(start, start + num_new)
            slots += [
                table[p // self.block_size] * self.block_size + p % self.block_size
                for p in range(start, start + num_new)
            ]
            starts.append(len(input_ids))
            seq_lens.append(start + num_new)
            tables.append(table)
            if start + num_new == request.num_tokens:  # caught up: this step yields its next token
                sample_rows.append(len(input_ids) - 1)
                sample_ids.append(request.request_id)
        width = max(len(t) for t in tables)
        as_tensor = lambda values: torch.tensor(values, dtype=torch.int64, device=self.device)  # noqa: E731
        metadata = AttentionMetadata(
            slot_mapping=as_tensor(slots),
            query_start_loc=starts,
            seq_lens=seq_lens,
            block_tables=as_tensor([t + [0] * (width - len(t)) for t in tables]),
            positions=as_tensor(positions),
        )
        hidden = self.model.forward(as_tensor(input_ids), metadata.positions, self.kv_caches, metadata)
        if not sample_rows and not wanted_rows:
            return [], torch.empty(0), []
        return sample_ids, self.model.logits(hidden[as_tensor(sample_rows + wanted_rows)]).cpu(), prompt_rows

    def _copy_blocks(self, copies: list[tuple[int, int]]) -> None:
        for src, dst in copies:
            for k_cache, v_cache in self.kv_caches:
                k_cache[dst].copy_(k_cache[src])
                v_cache[dst].copy_(v_cache[src])

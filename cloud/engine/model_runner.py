"""Turns a scheduler step into one batch for the model: input ids, positions, slot mapping, block
tables, gathered from the persistent batch (cloud/engine/input_batch.py) with tensor ops; runs it and
returns the logits of the requests that sample this step."""

import torch

from cloud.engine.block_manager import BlockManager
from cloud.engine.input_batch import InputBatch
from cloud.engine.scheduler import SchedulerOutput
from cloud.layers.attention import AttentionMetadata
from cloud.models.llama import LlamaModel
from formats.model_config import ModelConfig


class ModelRunner:
    def __init__(
        self,
        model: LlamaModel,
        config: ModelConfig,
        num_blocks: int,
        block_size: int,
        max_model_len: int,
        max_num_seqs: int = 64,
    ):
        self.model = model
        self.block_size = block_size
        tensor = model.embedding
        # per layer, for K and for V: blocks in the attention backend's layout (dim 0 the block)
        shapes = model.attention.kv_cache_shapes(num_blocks, block_size, config.num_kv_heads, config.head_dim)
        self.kv_caches = [
            tuple(torch.zeros(shape, dtype=tensor.dtype, device=tensor.device) for shape in shapes)
            for _ in range(config.num_layers)
        ]
        self.device = tensor.device
        self.input_batch = InputBatch(max_model_len, block_size, max_num_seqs)

    @torch.inference_mode()
    def execute_model(self, output: SchedulerOutput, block_manager: BlockManager):
        """Returns (request ids that sample, logits (R + P, vocab) float32 on the engine's device,
        and the requests with prompt positions whose logprobs they ask for: (request, positions),
        their P rows following the R sampling rows in order)."""
        self.input_batch.free(output.finished_req_ids)
        self._copy_blocks(output.block_copies)
        rows, computed, counts, sample_rows, sample_ids, prompt_rows, wanted_rows = ([] for _ in range(7))
        num_tokens = 0
        for request in output.scheduled:
            num_new = output.num_scheduled_tokens[request.request_id]
            start = request.num_computed_tokens
            rows.append(self.input_batch.update(request, block_manager.blocks_of(request.request_id)))
            if wanted := request.prompt_logprob_positions(start, num_new):
                prompt_rows.append((request, wanted))
                wanted_rows += [num_tokens + p - start for p in wanted]
            computed.append(start)
            counts.append(num_new)
            num_tokens += num_new
            if start + num_new == request.num_tokens:  # caught up: this step yields its next token
                sample_rows.append(num_tokens - 1)
                sample_ids.append(request.request_id)
        input_ids, metadata = self._prepare_inputs(rows, computed, counts)
        plan = self.model.attention.plan(metadata)
        hidden = self.model.forward(input_ids, metadata.positions, self.kv_caches, plan)
        if not sample_rows and not wanted_rows:
            return [], torch.empty(0), []
        selected = torch.tensor(sample_rows + wanted_rows, dtype=torch.int64, device=self.device)
        return sample_ids, self.model.logits(hidden[selected]), prompt_rows

    def _prepare_inputs(
        self, rows: list[int], computed: list[int], counts: list[int]
    ) -> tuple[torch.Tensor, AttentionMetadata]:
        """Input ids (T,) and the attention metadata of R requests: request r adds counts[r]
        tokens at positions computed[r].. of its row."""
        batch, block_size = self.input_batch, self.block_size
        row_ids = torch.tensor(rows, dtype=torch.int64)  # (R,)
        num_new = torch.tensor(counts, dtype=torch.int64)  # (R,)
        first = torch.tensor(computed, dtype=torch.int64)  # (R,)
        offsets = torch.cumsum(num_new, 0) - num_new  # (R,) where each request's tokens start
        token_rows = torch.repeat_interleave(row_ids, num_new)  # (T,)
        positions = torch.arange(len(token_rows)) - torch.repeat_interleave(offsets - first, num_new)
        input_ids = batch.token_ids[token_rows, positions]  # (T,)
        slots = batch.block_table[token_rows, positions // block_size] * block_size + positions % block_size
        seq_lens = [c + n for c, n in zip(computed, counts, strict=True)]
        width = -(-max(seq_lens) // block_size)
        to_device = lambda t: t.to(device=self.device, dtype=torch.int64)  # noqa: E731
        metadata = AttentionMetadata(
            slot_mapping=to_device(slots),
            query_start_loc=[0, *torch.cumsum(num_new, 0).tolist()],
            seq_lens=seq_lens,
            block_tables=to_device(batch.block_table[row_ids, :width]),
            positions=to_device(positions),
            num_computed_tokens=computed,
        )
        return to_device(input_ids), metadata

    def _copy_blocks(self, copies: list[tuple[int, int]]) -> None:
        for src, dst in copies:
            for k_cache, v_cache in self.kv_caches:
                k_cache[dst].copy_(k_cache[src])
                v_cache[dst].copy_(v_cache[src])

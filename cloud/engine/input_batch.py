"""The persistent batch (vLLM's InputBatch): one row per running request, kept across steps.

A row holds the request's token ids and its block table as tensors, updated in place: a new
request's tokens and blocks are written once when it gets its row; afterwards each step appends
only the tokens sampled since (one per decode step) and the blocks allocated since (or the last
block again, after a copy-on-write). Input ids and slot mappings are then gathered from the rows
with tensor ops, so a step's Python work is proportional to its requests and new tokens, never to
the tokens generated so far. Rows are freed when a request finishes, is aborted or preempted.
"""

import torch

from cloud.engine.block_manager import KVCacheBlock
from cloud.engine.request import Request

INITIAL_ROWS = 64


class InputBatch:
    def __init__(self, max_model_len: int, block_size: int, max_num_seqs: int = INITIAL_ROWS):
        self.max_model_len = max_model_len
        self.block_size = block_size
        self.max_blocks = -(-max_model_len // block_size)
        rows = max(1, max_num_seqs)
        self.token_ids = torch.zeros((rows, max_model_len), dtype=torch.int32)  # (rows, max_model_len)
        self.block_table = torch.zeros((rows, self.max_blocks), dtype=torch.int32)  # (rows, max_blocks)
        self.num_tokens = [0] * rows  # token ids written in each row
        self.num_blocks = [0] * rows  # block ids written in each row
        self.last_block = [-1] * rows  # the id of each row's last written block (copy-on-write)
        self.row_of: dict[str, int] = {}
        self.free_rows = list(range(rows - 1, -1, -1))

    def free(self, request_ids) -> None:
        for request_id in request_ids:
            row = self.row_of.pop(request_id, None)
            if row is not None:
                self.free_rows.append(row)

    def update(self, request: Request, blocks: list[KVCacheBlock]) -> int:
        """Bring the request's row up to date with its tokens and blocks (the block manager's
        own list, read from where the row left off); returns the row."""
        row = self.row_of.get(request.request_id)
        if row is None:
            row = self._new_row(request.request_id)
        self._append_tokens(row, request)
        self._append_blocks(row, blocks)
        return row

    def _new_row(self, request_id: str) -> int:
        if not self.free_rows:
            self._grow()
        row = self.free_rows.pop()
        self.row_of[request_id] = row
        self.num_tokens[row] = self.num_blocks[row] = 0
        self.last_block[row] = -1
        return row

    def _append_tokens(self, row: int, request: Request) -> None:
        written, prompt = self.num_tokens[row], request.prompt_token_ids
        if written == request.num_tokens:
            return
        if written < len(prompt):
            new = prompt[written:] + request.output_token_ids
        else:
            new = request.output_token_ids[written - len(prompt) :]
        self.token_ids[row, written : written + len(new)] = torch.tensor(new, dtype=torch.int32)
        self.num_tokens[row] = written + len(new)

    def _append_blocks(self, row: int, blocks: list[KVCacheBlock]) -> None:
        """The blocks allocated since the last update; the last written one again when a
        copy-on-write replaced it (a request's earlier blocks never change while it runs)."""
        first = self.num_blocks[row]
        if first and blocks[first - 1].block_id != self.last_block[row]:
            first -= 1
        if first == len(blocks):
            return
        new_ids = [block.block_id for block in blocks[first:]]
        self.block_table[row, first : len(blocks)] = torch.tensor(new_ids, dtype=torch.int32)
        self.num_blocks[row] = len(blocks)
        self.last_block[row] = new_ids[-1]

    def _grow(self) -> None:
        """Twice the rows (forked samples can run beyond max_num_seqs)."""
        rows = len(self.num_tokens)
        self.token_ids = torch.cat([self.token_ids, torch.zeros_like(self.token_ids)])
        self.block_table = torch.cat([self.block_table, torch.zeros_like(self.block_table)])
        self.num_tokens += [0] * rows
        self.num_blocks += [0] * rows
        self.last_block += [-1] * rows
        self.free_rows += range(2 * rows - 1, rows - 1, -1)

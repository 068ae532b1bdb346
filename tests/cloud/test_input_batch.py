"""The persistent batch: rows written once, then only what is new; block tables follow
allocation and copy-on-write; rows are freed and reused; per-step work does not grow with the
tokens generated."""

import torch

from cloud import LLM, SamplingParams
from cloud.engine.block_manager import KVCacheBlock
from cloud.engine.input_batch import InputBatch
from cloud.engine.request import Request
from shared.engine import EngineRequest
from shared.request_state import RequestState


def blocks(*ids: int) -> list[KVCacheBlock]:
    return [KVCacheBlock(block_id) for block_id in ids]


def test_a_row_holds_the_tokens_and_blocks_and_takes_only_the_new_ones():
    batch = InputBatch(max_model_len=32, block_size=4, max_num_seqs=2)
    request = Request("a", [5, 6, 7, 8, 9], SamplingParams())
    table = blocks(3, 1)
    row = batch.update(request, table)
    assert batch.token_ids[row, :5].tolist() == [5, 6, 7, 8, 9] and batch.num_tokens[row] == 5
    assert batch.block_table[row, :2].tolist() == [3, 1]
    request.output_token_ids += [11, 12]
    table += blocks(6)
    batch.token_ids[row, :5] = -1  # what is already written is never written again
    assert batch.update(request, table) == row
    assert batch.token_ids[row, :7].tolist() == [-1] * 5 + [11, 12]
    assert batch.block_table[row, :3].tolist() == [3, 1, 6] and batch.num_blocks[row] == 3


def test_a_copied_last_block_replaces_the_shared_one():
    batch = InputBatch(max_model_len=32, block_size=4)
    request = Request("a", [1, 2, 3, 4, 5, 6], SamplingParams())
    table = blocks(0, 2)
    row = batch.update(request, table)
    table[-1] = KVCacheBlock(9)  # copy-on-write of the partly filled, shared block
    batch.update(request, table)
    assert batch.block_table[row, :2].tolist() == [0, 9]


def test_rows_are_freed_reused_and_grown():
    batch = InputBatch(max_model_len=8, block_size=4, max_num_seqs=2)
    rows = [batch.update(Request(f"r{i}", [i + 1], SamplingParams()), blocks(i)) for i in range(3)]
    assert len(set(rows)) == 3 and batch.token_ids.shape == (4, 8)  # grown to twice the rows
    batch.free(["r1", "unknown"])
    again = batch.update(Request("r9", [42], SamplingParams()), blocks(7))
    assert again == rows[1] and batch.token_ids[again, 0] == 42 and batch.block_table[again, 0] == 7


def test_decode_steps_do_not_reread_whole_requests(tiny_llama_gguf, monkeypatch):
    """A request's whole token list is read only when one of its blocks fills (for its prefix
    hash), not every step."""
    reads = []
    original = RequestState.all_token_ids
    monkeypatch.setattr(
        RequestState, "all_token_ids", property(lambda self: reads.append(1) or original.fget(self))
    )
    llm = LLM(str(tiny_llama_gguf), num_blocks=64, block_size=4)
    params = SamplingParams(temperature=0, max_tokens=40, ignore_eos=True)
    prompts = [[5, 17, 200, 33, 7], [91, 250, 7]]
    for index, prompt in enumerate(prompts):
        llm.engine.add(EngineRequest(f"r{index}", tuple(prompt), params))
    steps = 0
    while llm.engine.has_work():
        llm.engine.step()
        steps += 1
    full_blocks = sum((len(p) + 40) // 4 for p in prompts)
    assert steps >= 40 and len(reads) <= full_blocks + len(prompts)


def test_token_ids_are_int32_rows():
    batch = InputBatch(max_model_len=16, block_size=4, max_num_seqs=1)
    assert batch.token_ids.dtype == torch.int32 and batch.block_table.shape == (1, 4)

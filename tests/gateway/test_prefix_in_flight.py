"""A prompt whose prefix this gateway's earlier request is computing on a node with a shared,
paged prefix cache counts as cached there: by the time the new request is prefilled, the blocks
are. An edge slot's cache is not shared between concurrent requests, so there it does not."""

import asyncio

import pytest

from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.routing.node_kind import NodeKind
from shared.prefix_hash import block_hashes, num_cached_blocks
from tests.fixtures.gateway_app import Gateway
from tests.gateway.test_node_failures import InstantNode

LONG_MESSAGES = [{"role": "user", "content": "Hello world " * 10}]
BLOCK_SIZE = 16


class HoldingNode(InstantNode):
    """Test double: a node describing a prefix cache of 16-token blocks (it reports holding
    nothing) that answers each request only once released; it notes the prompt tokens the
    gateway counted as still to compute there when each request arrived."""

    def __init__(self, kind: NodeKind):
        super().__init__()
        self.state.kind = kind
        self.state.shares_prefix_blocks = kind is NodeKind.CLOUD  # as the cloud engine's backend says
        self.state.prefix_block_size = BLOCK_SIZE
        self.pending_at_arrival: list[tuple[int, int]] = []  # (prompt tokens, counted pending)
        self.release = asyncio.Event()

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        prompt_tokens = len(request.prompt_token_ids)
        self.pending_at_arrival.append((prompt_tokens, self.state.load.own_pending_prompt_tokens))
        await self.release.wait()
        await super().run(request, sink, timeout_s, trace_headers, client)


async def _two_concurrent_requests(node: HoldingNode, model_path) -> None:
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=256)])
    async with Gateway(config, [node]) as gateway:

        async def ask():
            await gateway.client.chat.completions.create(model="tiny", messages=LONG_MESSAGES, max_tokens=5)

        first = asyncio.create_task(ask())
        while not node.pending_at_arrival:
            await asyncio.sleep(0.005)
        second = asyncio.create_task(ask())
        while len(node.pending_at_arrival) < 2:
            await asyncio.sleep(0.005)
        node.release.set()
        await asyncio.gather(first, second)
    assert not node.state.load.block_hashes_in_flight  # both finished: nothing left in flight


async def test_a_prompt_an_earlier_request_is_computing_counts_as_cached_where_blocks_are_shared(model_path):
    node = HoldingNode(NodeKind.CLOUD)
    await _two_concurrent_requests(node, model_path)
    (prompt, first_pending), (_, second_pending) = node.pending_at_arrival
    assert prompt > 2 * BLOCK_SIZE and first_pending == prompt
    cached = min(prompt // BLOCK_SIZE * BLOCK_SIZE, prompt - 1)
    assert second_pending == prompt + (prompt - cached)


async def test_an_edge_slot_cache_does_not_count_a_concurrent_request_prompt(model_path):
    node = HoldingNode(NodeKind.EDGE)
    await _two_concurrent_requests(node, model_path)
    (prompt, first_pending), (_, second_pending) = node.pending_at_arrival
    assert first_pending == prompt and second_pending == 2 * prompt


@pytest.mark.parametrize("salt", ["", "tenant-a"])
def test_num_cached_blocks_counts_leading_blocks_held_in_either_collection(salt):
    hashes = block_hashes(list(range(64)), BLOCK_SIZE, salt)
    assert len(hashes) == 4
    assert num_cached_blocks(hashes, {hashes[0]}, {hashes[1]: 1, hashes[3]: 1}) == 2
    assert num_cached_blocks(hashes, set(), {}) == 0
    assert num_cached_blocks(hashes, set(hashes)) == 4

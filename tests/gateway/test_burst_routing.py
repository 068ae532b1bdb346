"""A concurrent burst through the gateway uses both tiers: a real edge node process (two slots)
and the cloud engine in process (the embedded default of `hybridgw up`)."""

import asyncio
import collections

from cloud.llm_engine import LLMEngine
from gateway.backends.local_cloud import LocalCloudBackend
from gateway.serving import app_keys
from shared.async_engine import AsyncEngine
from tests.fixtures.gateway_app import Gateway, edge_config

NUM_REQUESTS = 32


async def test_a_burst_of_32_chats_is_served_by_both_tiers(model_path, edge_node):
    engine = LLMEngine(str(model_path), num_blocks=256, block_size=4, max_num_seqs=8)
    engine.warmup()  # as `hybridgw up`: measured rates from the start
    cloud = LocalCloudBackend(AsyncEngine(engine), frozenset({"tiny"}))
    try:
        async with Gateway(edge_config(model_path, edge_node), [cloud]) as gw:

            async def chat(index: int) -> tuple[str, int]:
                raw = await gw.client.chat.completions.with_raw_response.create(
                    model="tiny",
                    messages=[{"role": "user", "content": f"Tell me about number {index}"}],
                    max_tokens=24,
                    temperature=0,
                    stream=True,
                    extra_body={"ignore_eos": True},
                )
                num_chunks = sum([1 async for _ in raw.parse()])
                return raw.headers["X-Hybridgw-Target"], num_chunks

            results = await asyncio.gather(*(chat(i) for i in range(NUM_REQUESTS)))
            targets = collections.Counter(target for target, _ in results)
            assert set(targets) == {"edge", "cloud"}, targets
            assert min(targets.values()) >= 2, targets
            assert all(num_chunks >= 2 for _, num_chunks in results)
            # every request finished and was released: the live view is back to the nodes' own
            edge = next(b for b in gw.runner.app[app_keys.BACKENDS] if b.state.kind == "edge")
            assert (edge.state.load.own_requests, cloud.state.load.own_requests) == (0, 0)
            assert cloud.state.shares_prefix_blocks and not cloud.state.load.block_hashes_in_flight
            assert cloud.state.calibration.num_observed == targets["cloud"]
    finally:
        cloud.engine.close()

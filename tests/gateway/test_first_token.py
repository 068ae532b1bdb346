"""What the gateway does at a request's first token: it learns the node's TTFT there and then
(not when the answer ends), and when the first token is late on a node that is working, it moves
the request only to a node predicted to answer sooner."""

import asyncio

import pytest

from gateway.config.gateway_config import GatewayConfig, ModelEntry, RoutingPolicy
from gateway.routing.node_kind import NodeKind
from gateway.serving import app_keys
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config
from tests.gateway.test_node_failures import BusyNode, InstantNode


class PausingNode(InstantNode):
    """Test double: a node that sends a request's first token, then the rest once released."""

    def __init__(self):
        super().__init__()
        self.release = asyncio.Event()

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        self.send_tokens(request, sink, 0, 1)
        await self.release.wait()
        self.send_tokens(request, sink, 1, len(self.TOKENS))


async def test_the_ttft_calibration_learns_at_the_first_token_before_the_answer_ends(model_path):
    node = PausingNode()
    node.state.prefill_tokens_per_s = 10.0  # predicted far slower than it is
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=256)])
    async with Gateway(config, [node]) as gateway:
        stream = await gateway.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=5, stream=True
        )
        await anext(aiter(stream))
        calibration = node.state.calibration
        assert calibration.num_observed == 1 and calibration.ttft_factor < 0.5  # the answer runs on
        assert calibration.num_tpot_observed == 0
        node.release.set()
        _ = [chunk async for chunk in stream]
    assert calibration.num_observed == 1 and calibration.num_tpot_observed == 1  # each learned once


class QueueingNode(BusyNode):
    """Test double: busy streaming its first request (one token every 20 ms); it starts the next
    one once that has ended, as a full engine does: working, and late."""

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        if self.calls >= 1:
            await self.first_done.wait()
            return await InstantNode.run(self, request, sink, timeout_s, trace_headers, client)  # counts
        return await super().run(request, sink, timeout_s, trace_headers, client)


async def test_a_late_first_token_on_a_working_node_stays_there_when_elsewhere_is_predicted_slower(
    model_path, edge_node
):
    busy = QueueingNode()
    policy = RoutingPolicy(first_token_deadline_s=0.3, first_token_deadline_factor=1.0)
    async with Gateway(edge_config(model_path, edge_node, routing=policy), [busy]) as gateway:
        edge = next(b for b in gateway.runner.app[app_keys.BACKENDS] if b is not busy)
        edge.state.calibration.ttft_factor = 1000.0  # the edge is predicted to take seconds
        registry = gateway.runner.app[app_keys.METRICS].registry
        stream = await gateway.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=60, stream=True
        )
        await anext(aiter(stream))  # the busy node's long answer is under way (1.2 s)
        late = await gateway.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=3
        )
        assert late.headers["X-Hybridgw-Node"] == "broken"  # waited for the busy node
        assert registry.get_sample_value("hybridgw_first_token_deadlines_total") == 0
        logged = gateway.runner.app[app_keys.METRICS].recent.recent()[0]
        assert logged["node"] == "broken" and logged["ttft_ms"] >= 300
        assert busy.calls == 2
        _ = [chunk async for chunk in stream]


@pytest.mark.parametrize(
    ("headers", "served_by", "deadlines"),
    [({"X-Hybridgw-TTFT-Target-Ms": "60000"}, "broken", 0), ({}, "edge-a", 1)],
)
async def test_a_late_request_with_targets_stays_on_a_working_on_prem_engine(
    model_path, edge_node, headers, served_by, deadlines
):
    """`hybridgw up`'s in-process engine shares the edge's cores: with targets, a late first token
    there is no reason to move to the edge (gateway/routing/tier_preference.py); without, it moves."""
    engine = QueueingNode()
    engine.state.kind, engine.state.on_prem = NodeKind.CLOUD, True
    policy = RoutingPolicy(first_token_deadline_s=0.3, first_token_deadline_factor=1.0)
    async with Gateway(edge_config(model_path, edge_node, routing=policy), [engine]) as gateway:
        edge = next(b for b in gateway.runner.app[app_keys.BACKENDS] if b is not engine)
        edge.state.calibration.ttft_factor = 5.0  # the edge looks slower: the engine is tried first
        registry = gateway.runner.app[app_keys.METRICS].registry
        stream = await gateway.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=60, stream=True, extra_headers=headers
        )
        await anext(aiter(stream))  # the engine's long answer is under way (1.2 s)
        late = await gateway.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=3, extra_headers=headers
        )
        assert late.headers["X-Hybridgw-Node"] == served_by
        assert registry.get_sample_value("hybridgw_first_token_deadlines_total") == deadlines
        _ = [chunk async for chunk in stream]

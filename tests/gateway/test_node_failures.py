"""Nodes that fail or answer oddly, as in-process test doubles: a failing node is cooled down on
evidence (failures, not one) and the request retried elsewhere (streamed too, with the answering
node's headers); the only node is retried after a backoff, and a request it cannot take while
cooling down gets a JSON 503 saying so; a node that answers without waiting streams its whole
text."""

import asyncio
import json
import math
import time

import aiohttp

from formats.tokenizer import GGUFTokenizer
from gateway.config.gateway_config import GatewayConfig, ModelEntry, RoutingPolicy
from gateway.serving import app_keys
from shared.proto import inference_pb2 as pb
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config, greedy_text


class FailingNode:
    """Test double: a node that looks healthy and fast but fails every call before its first token."""

    def __init__(self):
        from gateway.routing.node_kind import NodeKind
        from gateway.routing.node_state import NodeState

        self.state = NodeState(
            "broken",
            NodeKind.EDGE,
            frozenset({"tiny"}),
            max_running=64,
            prefill_tokens_per_s=1e6,
            decode_tokens_per_s=1e6,
        )
        self.calls = 0

    async def start(self):
        pass

    async def close(self):
        pass

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        from gateway.backends.base import BackendError

        self.calls += 1
        raise BackendError("connection refused", 502)


async def test_a_node_failing_before_the_first_token_is_cooled_down_on_evidence_and_the_request_retried(
    model_path, edge_node
):
    broken = FailingNode()
    config = edge_config(model_path, edge_node)
    async with Gateway(config, [broken]) as gateway, aiohttp.ClientSession() as session:
        registry = gateway.runner.app[app_keys.METRICS].registry
        min_failures = config.routing.min_failures
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3}
        # the real edge predicts a first token within the router's tie of the double's, and ties
        # are broken at random: requests until the double failed min_failures of them (each
        # answered by edge-a); only the last of those takes it out
        for _ in range(60):
            async with session.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
                assert response.status == 200
                assert response.headers["X-Hybridgw-Node"] == "edge-a"
            if broken.calls == min_failures:
                break
            assert broken.state.cooldown_until == 0.0  # one failure is no evidence
        assert broken.calls == min_failures and broken.state.cooldown_until > time.monotonic()
        assert (
            registry.get_sample_value("hybridgw_node_retries_total", {"where": "other_node"}) == min_failures
        )
        assert registry.get_sample_value("hybridgw_node_cooldowns_total", {"node": "broken"}) == 1
        async with session.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
            assert response.status == 200
        assert broken.calls == min_failures  # cooling down: not tried again
        # streamed: the headers, made while the failing node had the request, name the node
        # that answered (the edge, calibrated on its answers, made to look slow again: the
        # failing node, half-open once its cooldown is over, gets the trial request first)
        broken.state.cooldown_until = 0.0
        edge = next(b for b in gateway.runner.app[app_keys.BACKENDS] if b is not broken)
        edge.state.calibration.ttft_factor = 10.0
        stream_body = {**body, "stream": True, "temperature": 0}
        async with session.post(f"{gateway.url}/v1/chat/completions", json=stream_body) as response:
            assert response.status == 200
            assert response.headers["X-Hybridgw-Node"] == "edge-a"
            assert response.headers["X-Hybridgw-Target"] == "edge"
            assert response.headers["Content-Type"] == "text/event-stream"
            lines = [line async for line in response.content if line.startswith(b"data: ")]
        assert broken.calls == min_failures + 1
        assert broken.state.cooldown_until > time.monotonic() + config.routing.cooldown_s  # doubled
        assert lines[-1] == b"data: [DONE]\n"
        text = "".join(
            (json.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
            for line in lines[:-1]
        )
        assert text == greedy_text(model_path, 3)


class InstantNode(FailingNode):
    """Test double: a node whose tokens are ready at once (it answers without ever waiting)."""

    TOKENS = (72, 101, 108, 108, 111)

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        self.calls += 1
        self.send_tokens(request, sink, 0, len(self.TOKENS))

    def send_tokens(self, request, sink, start: int, stop: int) -> None:
        """TOKENS[start:stop], one chunk each; the last of TOKENS finishes the request."""
        for position in range(start, stop):
            chunk = pb.GenerateChunk(request_id=request.request_id, index=position)
            chunk.tokens.add(token_id=self.TOKENS[position])
            if position == len(self.TOKENS) - 1:
                chunk.finish_reason = pb.FINISH_REASON_LENGTH
            sink.put(chunk)


async def test_a_node_that_answers_without_waiting_streams_whole_text(model_path):
    instant = InstantNode()
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])
    async with Gateway(config, [instant]) as gateway:
        stream = await gateway.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=5, stream=True
        )
        text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream])
        expected = GGUFTokenizer.from_file(model_path).decode(list(InstantNode.TOKENS), skip_special=True)
        assert expected and text == expected and instant.calls == 1


async def test_the_only_node_failing_is_retried_after_a_backoff_then_refused_while_cooling_down(model_path):
    broken = FailingNode()
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])
    policy = config.routing
    assert (policy.max_attempts, policy.min_failures) == (2, 3)  # what the counts below follow from
    async with Gateway(config, [broken]) as gateway, aiohttp.ClientSession() as session:
        registry = gateway.runner.app[app_keys.METRICS].registry
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3, "stream": True}
        # the only node: tried again after a backoff, not left; both attempts fail: the node's error
        started = time.monotonic()
        async with session.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
            assert response.status == 502 and response.content_type == "application/json"
            error = (await response.json())["error"]
            assert error["type"] == "server_error" and "connection refused" in error["message"]
        assert time.monotonic() - started >= policy.retry_backoff_s
        assert broken.calls == 2 and broken.state.cooldown_until == 0.0
        # the third failure in a row takes it out: the retry finds it cooling down, and says so
        async with session.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
            assert response.status == 503 and response.content_type == "application/json"
            assert response.headers["Retry-After"] == str(math.ceil(policy.cooldown_s))
            assert "X-Hybridgw-Node" not in response.headers
            error = (await response.json())["error"]
            assert error["type"] == "server_error" and error["code"] == "node_cooling_down"
            assert f"retry in {math.ceil(policy.cooldown_s)} s" in error["message"]
        assert broken.calls == 3
        assert registry.get_sample_value("hybridgw_node_retries_total", {"where": "same_node"}) == 2
        assert (
            registry.get_sample_value("hybridgw_refused_requests_total", {"reason": "node_cooling_down"}) == 1
        )
        async with session.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
            assert response.status == 503  # and the connection serves the next request as usual
        assert broken.calls == 3
        assert (
            registry.get_sample_value("hybridgw_refused_requests_total", {"reason": "node_cooling_down"}) == 2
        )


class DyingNode(InstantNode):
    """Test double: two tokens, then the node fails (a worker lost, a connection cut)."""

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        from gateway.backends.base import BackendError

        self.calls += 1
        for position, token_id in enumerate(self.TOKENS[:2]):
            chunk = pb.GenerateChunk(request_id=request.request_id, index=position)
            chunk.tokens.add(token_id=token_id)
            sink.put(chunk)
        raise BackendError("edge node dying: UNAVAILABLE", 502)


async def test_a_node_failing_mid_stream_ends_it_with_an_error_event_not_a_cut(model_path):
    dying = DyingNode()
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])
    async with Gateway(config, [dying]) as gateway, aiohttp.ClientSession() as session:
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 5, "stream": True}
        async with session.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
            assert response.status == 200
            lines = [line async for line in response.content if line.startswith(b"data: ")]
        assert lines[-1] == b"data: [DONE]\n"
        error = json.loads(lines[-2][6:])["error"]
        assert error["type"] == "server_error" and "UNAVAILABLE" in error["message"]
        text = "".join(
            (json.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
            for line in lines[:-2]
        )
        expected = GGUFTokenizer.from_file(model_path).decode(list(DyingNode.TOKENS[:2]), skip_special=True)
        assert text == expected
        assert dying.state.cooldown_until == 0.0  # one failure: counted, not taken out
        assert gateway.runner.app[app_keys.DISPATCHER].failures.breakers["broken"].num_failures == 1
        unstreamed = {**body, "stream": False}
        async with session.post(f"{gateway.url}/v1/chat/completions", json=unstreamed) as response:
            assert response.status == 502 and (await response.json())["error"]["type"] == "server_error"
    assert dying.calls == 2


class BusyNode(InstantNode):
    """Test double: a node that streams its first request's tokens slowly (one every 20 ms) and
    starts no other request while that one runs: busy, not hung. Once it ends, it is hung."""

    def __init__(self):
        super().__init__()
        self.first_done = asyncio.Event()

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        self.calls += 1
        if self.calls > 1:
            await asyncio.Event().wait()  # never a token (cancelled when the request moves)
        try:
            for position in range(60):
                chunk = pb.GenerateChunk(request_id=request.request_id, index=position)
                chunk.tokens.add(token_id=self.TOKENS[position % len(self.TOKENS)])
                if position == 59:
                    chunk.finish_reason = pb.FINISH_REASON_LENGTH
                sink.put(chunk)
                await asyncio.sleep(0.02)
        finally:  # the gateway cancels the call once the last chunk is in
            self.first_done.set()


async def test_a_late_first_token_on_a_working_node_moves_the_request_but_cools_down_only_a_hung_one(
    model_path, edge_node
):
    busy = BusyNode()
    policy = RoutingPolicy(first_token_deadline_s=0.3, first_token_deadline_factor=1.0)
    async with Gateway(edge_config(model_path, edge_node, routing=policy), [busy]) as gateway:
        edge = next(b for b in gateway.runner.app[app_keys.BACKENDS] if b is not busy)
        edge.state.calibration.ttft_factor = 5.0  # the edge looks slower: the busy node is tried first
        registry = gateway.runner.app[app_keys.METRICS].registry
        stream = await gateway.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=60, stream=True
        )
        first = await anext(aiter(stream))  # the busy node's long answer is under way
        assert first.choices[0].delta.role == "assistant"
        late = await gateway.client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=MESSAGES,
            max_tokens=3,
            timeout=20,  # left on the busy one: it hangs
        )
        assert late.headers["X-Hybridgw-Node"] == "edge-a"
        assert registry.get_sample_value("hybridgw_first_token_deadlines_total") == 1
        logged = gateway.runner.app[app_keys.METRICS].recent.recent()[0]
        assert logged["node"] == "edge-a" and logged["ttft_ms"] >= 300  # the client's wait: both nodes
        assert busy.calls == 2 and busy.state.cooldown_until <= time.monotonic()  # working: kept
        _ = [chunk async for chunk in stream]
        await busy.first_done.wait()
        edge.state.calibration.ttft_factor = 5.0
        hung = await gateway.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=3
        )
        assert hung.headers["X-Hybridgw-Node"] == "edge-a"
        assert registry.get_sample_value("hybridgw_first_token_deadlines_total") == 2
        assert busy.calls == 3 and busy.state.cooldown_until > time.monotonic()  # no token: cooled


class CachingNode(InstantNode):
    """Test double: a node that, after a request, holds its prompt's blocks in its prefix cache
    (and says so, as a node's report does); it notes what the gateway counted as prompt tokens
    still to compute there when each request arrived."""

    def __init__(self):
        super().__init__()
        self.state.prefix_block_size = 16
        self.pending_at_arrival: list[tuple[int, int]] = []  # (prompt tokens, counted pending)

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        from shared.prefix_hash import block_hashes

        prompt = list(request.prompt_token_ids)
        self.pending_at_arrival.append((len(prompt), self.state.load.own_pending_prompt_tokens))
        self.state.cached_block_hashes = frozenset(block_hashes(prompt, 16, request.cache_salt))
        await super().run(request, sink, timeout_s, trace_headers, client)


async def test_a_prompt_the_node_holds_counts_as_work_ahead_only_for_its_uncached_tokens(model_path):
    caching = CachingNode()
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=256)])
    long_messages = [{"role": "user", "content": "Hello world " * 10}]
    async with Gateway(config, [caching]) as gateway:
        for _ in range(2):
            await gateway.client.chat.completions.create(model="tiny", messages=long_messages, max_tokens=5)
    (first_prompt, first_pending), (second_prompt, second_pending) = caching.pending_at_arrival
    assert first_prompt == second_prompt > 32 and first_pending == first_prompt  # nothing cached yet
    cached = min(first_prompt // 16 * 16, first_prompt - 1)
    assert second_pending == first_prompt - cached


class FirstTokenNode(InstantNode):
    """Test double: a node that gives the first token at once and never another (`silent`: none)."""

    def __init__(self, silent: bool = False):
        super().__init__()
        self.silent = silent

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        self.calls += 1
        if not self.silent:
            self.send_tokens(request, sink, 0, 1)
        await asyncio.Event().wait()


async def test_a_client_that_leaves_is_logged_as_cancelled_before_or_after_its_first_token(
    model_path, caplog
):
    """Each request leaves one log line, and one that the client abandons says `cancelled` (it
    said `error`), also when it was still waiting for its first token (it left no line at all)."""
    import logging

    from tests.fixtures.polling import eventually

    caplog.set_level(logging.INFO, logger="hybridgw.gateway")
    body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 5}
    for node, stage in ((FirstTokenNode(silent=True), "before_first_token"), (FirstTokenNode(), None)):
        caplog.clear()
        config = GatewayConfig(
            models=[ModelEntry("tiny", str(model_path), context_length=128)],
            routing=RoutingPolicy(first_token_deadline_s=60),
        )
        async with Gateway(config, [node]) as gateway, aiohttp.ClientSession() as session:
            url, timeout = f"{gateway.url}/v1/chat/completions", aiohttp.ClientTimeout(total=0.5)
            try:
                async with session.post(url, json=body, timeout=timeout) as response:
                    await response.read()
            except TimeoutError:
                pass  # the client gave up and closed its connection

            def lines() -> list[dict]:
                logged = [
                    json.loads(r.getMessage()) for r in caplog.records if r.getMessage().startswith("{")
                ]
                return [line for line in logged if line.get("event") == "request"]

            await eventually(lambda: lines(), timeout=10, what="the request's log line")
            (line,) = lines()
            assert line["outcome"] == "cancelled" and line.get("stage") == stage, line

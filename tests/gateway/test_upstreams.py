"""OpenAI-compatible servers as nodes, against real ones: another hybridgw gateway process (with
its own real edge node) is the upstream. Routing and privacy by its kind, streaming, the same
text as asking it directly, and failover to another upstream before the first token."""

import asyncio
import json
import os
import signal
from dataclasses import replace

import openai
import pytest

from gateway.backends.upstream import INITIAL_DECODE_TOKENS_PER_S
from gateway.config.gateway_config import GatewayConfig, ModelEntry, UpstreamEntry
from tests.fixtures.edge_node import free_port, long_context_node  # noqa: F401 - a fixture
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.gateway_process import GatewayProcess

pytestmark = pytest.mark.integration
PRIVATE = {"X-Hybridgw-Privacy": "private"}


@pytest.fixture(scope="module")
def peer(model_path, edge_node):
    peer = GatewayProcess(model_path, f"127.0.0.1:{edge_node.port}")
    yield peer
    peer.stop()


@pytest.fixture(scope="module")
def nodeless_peer(model_path):
    """A gateway whose only edge node is not there: alive, but every generation is a 503."""
    peer = GatewayProcess(model_path, f"127.0.0.1:{free_port()}")
    yield peer
    peer.stop()


def _config(model_path, *upstreams: UpstreamEntry, context_length=128) -> GatewayConfig:
    return GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=context_length)],
        upstreams=list(upstreams),
    )


async def _ready(gw) -> None:
    from gateway.serving import app_keys
    from tests.fixtures.polling import eventually

    await eventually(
        lambda: any(b.state.healthy for b in gw.runner.app[app_keys.BACKENDS]), what="an upstream up"
    )


async def test_a_cloud_upstream_serves_public_requests_only(model_path, peer):
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    expected = await direct.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=8, temperature=0
    )
    async with Gateway(_config(model_path, UpstreamEntry("peer", peer.url, "cloud", {"tiny": "tiny"}))) as gw:
        await _ready(gw)
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=8, temperature=0
        )
        answer = raw.parse()
        assert raw.headers["X-Hybridgw-Node"] == "peer" and raw.headers["X-Hybridgw-Target"] == "cloud"
        assert answer.choices[0].message.content == expected.choices[0].message.content
        assert answer.usage.completion_tokens == expected.usage.completion_tokens
        stream = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=8, temperature=0, stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        assert text == expected.choices[0].message.content
        with pytest.raises(openai.APIStatusError) as refused:  # off-prem: never a private request
            await gw.client.chat.completions.create(
                model="tiny", messages=MESSAGES, max_tokens=4, extra_headers=PRIVATE
            )
        assert refused.value.status_code == 503 and refused.value.body["code"] == "no_private_node"
    await direct.close()


async def test_an_edge_upstream_takes_private_requests(model_path, peer):
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    expected = await direct.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=4, temperature=0, extra_headers=PRIVATE
    )
    async with Gateway(
        _config(model_path, UpstreamEntry("on-prem", peer.url, "edge", {"tiny": "tiny"}))
    ) as gw:
        await _ready(gw)
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=4, temperature=0, extra_headers=PRIVATE
        )
        answer = raw.parse()
        assert raw.headers["X-Hybridgw-Node"] == "on-prem"
        assert answer.choices[0].message.content == expected.choices[0].message.content
        assert answer.usage.completion_tokens == expected.usage.completion_tokens
    await direct.close()


async def test_an_upstream_failing_before_the_first_token_hands_the_request_on(
    model_path, peer, nodeless_peer
):
    upstreams = (
        UpstreamEntry("broken", nodeless_peer.url, "cloud", {"tiny": "tiny"}, max_concurrency=64),
        UpstreamEntry("peer", peer.url, "cloud", {"tiny": "tiny"}, max_concurrency=1),
    )
    async with Gateway(_config(model_path, *upstreams)) as gw:
        from gateway.serving import app_keys
        from tests.fixtures.polling import eventually

        backends = {b.state.node_id: b for b in gw.runner.app[app_keys.BACKENDS]}
        await eventually(lambda: all(b.state.healthy for b in backends.values()), what="both up")
        backends["peer"].state.decode_tokens_per_s = 0.5  # looks slow: "broken" is tried first
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=4
        )
        assert raw.headers["X-Hybridgw-Node"] == "peer"
        # tried, failed (its 503), the request handed on; one failure takes no node out
        failures = gw.runner.app[app_keys.DISPATCHER].failures
        assert failures.breakers["broken"].num_failures == 1
        assert backends["broken"].state.cooldown_until == 0.0


def _vllm_metrics(prompt_tokens: float, prefill_s: float, latency_sum: float, tokens: int) -> str:
    histogram = "vllm:inter_token_latency_seconds"
    return (
        '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3.0\n'
        '# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name="m"} 2.0\n'
        '# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name="m"} 0.25\n'
        f"# TYPE {histogram} histogram\n"
        f'{histogram}_bucket{{model_name="m",le="0.1"}} {tokens}\n'
        f'{histogram}_bucket{{model_name="m",le="+Inf"}} {tokens}\n'
        f'{histogram}_count{{model_name="m"}} {tokens}\n{histogram}_sum{{model_name="m"}} {latency_sum}\n'
        f'vllm:request_prompt_tokens_sum{{model_name="m"}} {prompt_tokens}\n'
        f'vllm:request_prompt_tokens_count{{model_name="m"}} 4\n'
        f'vllm:request_prefill_time_seconds_sum{{model_name="m"}} {prefill_s}\n'
        f'vllm:request_prefill_time_seconds_count{{model_name="m"}} 4\n'
    )


def test_load_and_speed_are_read_from_the_metrics_servers_export():
    from gateway.backends.upstream_load import MetricsReading, UpstreamMetrics

    vllm = UpstreamMetrics()
    # since its start: 1000 prompt tokens in 2 s of prefill; 100 tokens 0.02 s apart
    assert vllm.read(_vllm_metrics(1000, 2.0, 2.0, 100)) == MetricsReading(5, 0.25, 500.0, 50.0)
    # since the previous poll: 3000 more prompt tokens in 2 s; 100 more tokens 0.04 s apart
    reading = vllm.read(_vllm_metrics(4000, 4.0, 6.0, 200))
    assert reading.prefill_tokens_per_s == pytest.approx(1500.0)
    assert reading.decode_tokens_per_s == pytest.approx(25.0)
    assert vllm.read(_vllm_metrics(4000, 4.0, 6.0, 200)).decode_tokens_per_s is None  # idle since
    llamacpp = (
        "llamacpp:requests_processing 1\nllamacpp:requests_deferred 4\nllamacpp:kv_cache_usage_ratio 0.5\n"
        "llamacpp:prompt_tokens_seconds 310.5\nllamacpp:predicted_tokens_seconds 21.0\n"
    )
    assert UpstreamMetrics().read(llamacpp) == MetricsReading(5, 0.5, 310.5, 21.0)
    assert UpstreamMetrics().read("hybridgw_requests_in_flight 2\n") == MetricsReading(2, 0.0)
    assert UpstreamMetrics().read("process_cpu_seconds_total 3\n") is None  # nothing it knows
    assert UpstreamMetrics().read("{{{ not prometheus") is None


async def test_requests_other_clients_run_there_count_as_its_load(model_path, peer, edge_node):
    metrics = peer.url.removesuffix("/v1") + "/metrics"
    entry = UpstreamEntry("peer", peer.url, "cloud", {"tiny": "tiny"}, metrics_url=metrics)
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    async with Gateway(_config(model_path, entry)) as gw:
        from gateway.serving import app_keys
        from tests.fixtures.polling import eventually

        backend = gw.runner.app[app_keys.BACKENDS][0]
        await _ready(gw)
        assert backend.state.load.other_requests == 0
        os.kill(edge_node.process.pid, signal.SIGSTOP)  # the upstream's request stays in flight
        try:
            busy = asyncio.create_task(  # another client of the upstream, not us
                direct.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=4)
            )
            await eventually(lambda: backend.state.load.other_requests >= 1, what="its load seen")
        finally:
            os.kill(edge_node.process.pid, signal.SIGCONT)
        await busy
        await eventually(lambda: backend.state.load.other_requests == 0, what="its load gone")
        # its TPOT histogram saw the other client's request: the decode rate moved toward it
        start = INITIAL_DECODE_TOKENS_PER_S
        await eventually(lambda: backend.state.decode_tokens_per_s != start, what="its speed seen")
    await direct.close()


# a closed choice: the tiny random model's greedy strings would otherwise never end
CITY = {
    "type": "object",
    "properties": {"city": {"enum": ["Paris", "Oslo"]}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": CITY}}
NAMED = {"type": "function", "function": {"name": "get_weather"}}
SCHEMA = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY}}
IMAGE_MESSAGES = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        ],
    }
]


def _chat_upstream(node_id, peer, kind="cloud", capabilities=()) -> UpstreamEntry:
    return UpstreamEntry(
        node_id, peer.url, kind, {"tiny": "tiny"}, api="chat", capabilities=list(capabilities)
    )


async def test_a_chat_upstream_gets_the_messages_and_streams_the_same_answer(model_path, peer):
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    expected = await direct.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=12, temperature=0
    )
    text = expected.choices[0].message.content
    async with Gateway(_config(model_path, _chat_upstream("hosted", peer))) as gw:
        await _ready(gw)
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=12, temperature=0
        )
        assert raw.headers["X-Hybridgw-Node"] == "hosted" and raw.parse().choices[0].message.content == text
        stream = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=12, temperature=0, stream=True
        )
        assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) == text
        stop = text.strip()[2:5]  # the gateway's own stop strings cut the upstream's text
        stopped = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=12, temperature=0, stop=[stop]
        )
        assert stopped.choices[0].message.content == text[: text.index(stop)]
        assert stopped.choices[0].finish_reason == "stop"
        with pytest.raises(openai.BadRequestError) as refused:  # a chat API takes no token prompts
            await gw.client.completions.create(model="tiny", prompt="Hello", max_tokens=4)
        assert refused.value.body["param"] == "prompt"
    await direct.close()


@pytest.fixture(scope="module")
def long_peer(long_context_node):  # noqa: F811 - the fixture
    """(model path, peer): a gateway process in front of a node with room for a tool listing."""
    path, node = long_context_node
    peer = GatewayProcess(path, f"127.0.0.1:{node.port}")
    yield path, peer
    peer.stop()


async def test_tools_and_response_format_pass_through_to_a_chat_upstream_that_declares_them(long_peer):
    model_path, peer = long_peer
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    ask = {"model": "tiny", "messages": MESSAGES, "max_tokens": 200, "temperature": 0}
    called = await direct.chat.completions.create(**ask, tools=[WEATHER], tool_choice=NAMED)
    formatted = await direct.chat.completions.create(**ask, response_format=SCHEMA)
    entry = _chat_upstream("hosted", peer, capabilities=("tools", "structured_output"))
    async with Gateway(_config(model_path, entry, context_length=2048)) as gw:
        await _ready(gw)
        answer = await gw.client.chat.completions.create(**ask, tools=[WEATHER], tool_choice=NAMED)
        (call,) = answer.choices[0].message.tool_calls
        (expected,) = called.choices[0].message.tool_calls
        assert call.function.name == expected.function.name == "get_weather"
        assert json.loads(call.function.arguments) == json.loads(expected.function.arguments)
        assert answer.choices[0].finish_reason == "tool_calls"
        shaped = await gw.client.chat.completions.create(**ask, response_format=SCHEMA)
        assert shaped.choices[0].message.content == formatted.choices[0].message.content
    plain = _config(model_path, _chat_upstream("plain", peer), context_length=2048)
    async with Gateway(plain) as gw:  # declares neither
        await _ready(gw)
        for fields, param in (
            ({"response_format": SCHEMA}, "response_format"),
            ({"tools": [WEATHER]}, "tools"),
        ):
            with pytest.raises(openai.BadRequestError) as refused:
                await gw.client.chat.completions.create(**ask, **fields)
            assert refused.value.body["param"] == param
    await direct.close()


async def test_images_go_only_to_a_vision_upstream_and_stay_on_prem_when_private(model_path, peer):
    from gateway.privacy import PrivacyMode

    ask = {"model": "tiny", "messages": IMAGE_MESSAGES, "max_tokens": 4}
    eyes = _chat_upstream("eyes", peer, capabilities=("vision",))
    local = UpstreamEntry("local", peer.url, "edge", {"tiny": "tiny"})  # on-prem, no vision
    public = replace(_config(model_path, local, eyes), privacy_mode=PrivacyMode.PUBLIC)
    async with Gateway(public) as gw:
        await _ready(gw)
        with pytest.raises(openai.BadRequestError) as relayed:
            await gw.client.chat.completions.create(**ask)
        # "eyes" got the parts unchanged: the peer (no vision of its own) names the image part
        assert "upstream eyes answered 400" in relayed.value.message
        assert "messages[0].content[1]" in relayed.value.message
        private = await _refused(gw, ask, {"X-Hybridgw-Privacy": "private"})  # eyes is off-prem
        assert private["param"] == "messages[0].content[1]" and "No on-prem node" in private["message"]
    async with Gateway(_config(model_path, local, eyes)) as gw:  # auto: an image is not scanned: private
        await _ready(gw)
        assert (await _refused(gw, ask, {}))["code"] == "unsupported_content"
    on_prem = _config(model_path, _chat_upstream("eyes-on-prem", peer, "edge", ("vision",)))
    async with Gateway(on_prem) as gw:
        await _ready(gw)
        with pytest.raises(openai.BadRequestError) as relayed:
            await gw.client.chat.completions.create(**ask)
        assert "upstream eyes-on-prem answered 400" in relayed.value.message


async def _refused(gw, ask: dict, headers: dict) -> dict:
    with pytest.raises(openai.BadRequestError) as refused:
        await gw.client.chat.completions.create(**ask, extra_headers=headers)
    return refused.value.body

"""The edge gRPC node as a user runs it: `hybridgw edge` in its own process."""

import json
import os
import signal
import socket
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from shared.engine import EngineRequest
from shared.proto import inference_pb2 as pb
from shared.sampling import SamplingParams
from tests.fixtures.edge_node import EdgeNode, node_request
from tests.fixtures.tiny_models import config_for, write_tiny_model

pytestmark = pytest.mark.integration  # every test starts `hybridgw edge` (the module's node, or its own)


@pytest.fixture(scope="module")
def model_path(tiny_model):
    return tiny_model(GGMLType.Q8_0)


@pytest.fixture(scope="module")
def node(model_path):
    node = EdgeNode(model_path)
    yield node
    assert node.stop() == 0


def token_offsets(chunks: list[pb.GenerateChunk]) -> list[int]:
    """Each chunk's index is the number of tokens streamed before it (chunks may carry several)."""
    offsets, total = [], 0
    for chunk in chunks:
        offsets.append(total)
        total += len(chunk.tokens)
    return offsets


def test_generate_streams_the_engines_tokens(node, model_path):
    chunks = list(node.stub.Generate(node_request([1, 2, 3, 4], max_tokens=6, logprobs=2)))
    engine = EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256))
    engine.add(EngineRequest("x", [1, 2, 3, 4], SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)))
    expected = []
    while engine.has_work():
        expected += [o.token.token_id for o in engine.step().outputs]
    assert [t.token_id for c in chunks for t in c.tokens] == expected
    assert [c.index for c in chunks] == token_offsets(chunks)
    assert chunks[-1].finish_reason == pb.FINISH_REASON_LENGTH
    assert chunks[-1].usage.prompt_tokens == 4 and chunks[-1].usage.completion_tokens == 6
    assert all(c.finish_reason == pb.FINISH_REASON_UNSPECIFIED for c in chunks[:-1])
    assert len(chunks[0].tokens[0].top_logprobs) == 2
    assert chunks[0].tokens[0].top_logprobs[0].token_id == expected[0]


def test_stats_and_health(node):
    stats = node.stub.Stats(pb.StatsRequest())
    assert (stats.node_id, stats.kind, stats.max_running, stats.context_length) == (
        "test-edge",
        "edge",
        1,
        256,
    )
    health = health_pb2_grpc.HealthStub(node.channel)
    for service in ("", "hybridgw.inference.v1.Inference"):
        status = health.Check(health_pb2.HealthCheckRequest(service=service)).status
        assert status == health_pb2.HealthCheckResponse.SERVING


def test_metrics_and_http_health_on_the_side_port(node):
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    base = f"http://127.0.0.1:{node.metrics_port}"
    assert requests.get(f"{base}/health/live", timeout=5).json() == {"status": "ok"}
    ready = requests.get(f"{base}/health/ready", timeout=5)
    assert ready.status_code == 200 and ready.json()["node_id"] == "test-edge"
    from edge.kernels.isa import running_kernels

    assert ready.json()["kernels"] == {"backend": "numba", **running_kernels()}
    before = node.stub.Stats(pb.StatsRequest())
    chunks = list(node.stub.Generate(node_request([5, 6, 7], max_tokens=5)))
    response = requests.get(f"{base}/metrics", timeout=5)
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/plain")
    samples = {
        sample.name: sample
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    labels = {"node": "test-edge", "kind": "edge"}
    assert samples["hybridgw_node_requests_total"].labels == labels
    assert samples["hybridgw_node_requests_total"].value == before.requests_total + 1
    generated = sum(len(chunk.tokens) for chunk in chunks)  # a chunk carries every token ready at once
    assert samples["hybridgw_node_generated_tokens_total"].value == before.tokens_generated_total + generated
    assert samples["hybridgw_node_max_running_requests"].value == 1
    assert samples["hybridgw_node_running_requests"].value == 0
    assert samples["hybridgw_node_draining"].value == 0


def test_cancelling_a_call_frees_its_slot(node):
    stream = node.stub.Generate(node_request([1, 2, 3], max_tokens=200))
    next(stream)
    stream.cancel()
    deadline = time.monotonic() + 10
    while node.stub.Stats(pb.StatsRequest()).num_running:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    chunks = list(node.stub.Generate(node_request([5, 6], max_tokens=3)))  # the one slot is free again
    assert sum(len(chunk.tokens) for chunk in chunks) == 3 and time.monotonic() - started < 10
    logged = node.requests_logged()
    assert any(entry["outcome"] == "cancelled" for entry in logged)
    assert any(entry["outcome"] == "length" and entry["completion_tokens"] == 3 for entry in logged)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (node_request([1, 2], temperature=-1.0), "temperature"),
        (node_request([1] * 300), "context window"),
        (node_request([999_999]), "token ids"),
        (node_request([]), "empty"),
    ],
)
def test_bad_requests_are_invalid_argument(node, request_, message):
    with pytest.raises(grpc.RpcError) as error:
        list(node.stub.Generate(request_))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in error.value.details()


def test_sigterm_drains_running_requests_then_exits(tmp_path):
    # a long context, so the request is still running when the signal lands (40 tokens can finish first)
    long_context = config_for(GGMLType.Q8_0, context_length=4096)
    model_path = write_tiny_model(tmp_path / "long.gguf", GGMLType.Q8_0, long_context)
    node = EdgeNode(model_path, ctx_size=4096)
    stream = node.stub.Generate(node_request([1, 2, 3], max_tokens=4000))
    first = next(stream)
    os.kill(node.process.pid, signal.SIGTERM)
    rest = list(stream)
    assert len(first.tokens) + sum(len(c.tokens) for c in rest) == 4000 and first.index == 0
    assert rest[-1].finish_reason == pb.FINISH_REASON_LENGTH
    assert node.process.wait(timeout=30) == 0
    draining = [json.loads(line) for line in node.lines if '"draining"' in line]
    assert [(d["running"], d["waiting"]) for d in draining] == [(1, 0)]
    assert any('"stopped"' in line for line in node.lines)


def test_a_busy_port_is_a_clear_error(model_path):
    from tests.fixtures.cli import run_hybridgw

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_hybridgw("edge", "--model", str(model_path), "--port", str(port), timeout=120)
    assert result.returncode == 1
    assert f"hybridgw: error: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr

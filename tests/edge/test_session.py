"""The node's Session RPC on a real edge node: many requests on one stream, cancels, errors."""

import os
import queue
import signal
import threading
import time

import pytest

from shared.proto import inference_pb2 as pb
from tests.edge.test_server import token_offsets
from tests.fixtures import edge_node as shared_fixtures
from tests.fixtures.edge_node import EdgeNode, node_request


class OpenSession:
    """A Session call driven from a test: send() messages, replies() collected by a thread."""

    def __init__(self, node: EdgeNode):
        self._outbox: queue.Queue = queue.Queue()
        self.call = node.stub.Session(iter(self._outbox.get, None))
        self.chunks: list[pb.GenerateChunk] = []
        self.batches = 0
        self.ended = threading.Event()
        self.error: Exception | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for batch in self.call:
                self.batches += 1
                self.chunks.extend(batch.chunks)
        except Exception as error:
            self.error = error
        finally:
            self.ended.set()

    def generate(self, request: pb.GenerateRequest) -> None:
        self._outbox.put(pb.SessionMessage(generate=request))

    def cancel(self, request_id: str) -> None:
        self._outbox.put(pb.SessionMessage(cancel=request_id))

    def done_writing(self) -> None:
        self._outbox.put(None)

    def of(self, request_id: str) -> list[pb.GenerateChunk]:
        return [chunk for chunk in self.chunks if chunk.request_id == request_id]

    def wait_finished(self, request_id: str, timeout: float = 30) -> list[pb.GenerateChunk]:
        deadline = time.monotonic() + timeout
        while not any(c.finish_reason for c in self.of(request_id)):
            assert time.monotonic() < deadline and not self.ended.is_set(), self.error
            time.sleep(0.005)
        return self.of(request_id)


def tokens(chunks: list[pb.GenerateChunk]) -> list[int]:
    return [token.token_id for chunk in chunks for token in chunk.tokens]


model_path = shared_fixtures.model_path
edge_node = shared_fixtures.edge_node


@pytest.fixture(scope="module")
def node(edge_node):
    return edge_node


def _wait_idle(node: EdgeNode) -> None:
    deadline = time.monotonic() + 10
    while node.stub.Stats(pb.StatsRequest()).num_running:
        assert time.monotonic() < deadline, "the node still runs a request"
        time.sleep(0.01)


def test_requests_on_one_session_match_their_own_generate_calls(node):
    requests = [node_request([1, 2, 3, 4], max_tokens=7), node_request([9, 8], max_tokens=5, logprobs=1)]
    expected = [list(node.stub.Generate(request)) for request in requests]
    session = OpenSession(node)
    for request in requests:
        session.generate(request)
    for request, alone in zip(requests, expected, strict=True):
        chunks = session.wait_finished(request.request_id)
        assert tokens(chunks) == tokens(alone)
        assert [c.index for c in chunks] == token_offsets(chunks)
        assert chunks[-1].finish_reason == pb.FINISH_REASON_LENGTH
        assert chunks[-1].usage.completion_tokens == request.sampling.max_tokens
    logprobs = [t.top_logprobs for c in session.of(requests[1].request_id) for t in c.tokens]
    assert all(len(top) == 1 for top in logprobs)
    session.done_writing()
    assert session.ended.wait(10) and session.error is None  # done writing, nothing running: it ends


def test_a_cancel_message_aborts_only_that_request(node):
    session = OpenSession(node)
    long, short = node_request([1, 2, 3], max_tokens=200), node_request([4, 5], max_tokens=3)
    session.generate(long)
    deadline = time.monotonic() + 10
    while not session.of(long.request_id):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    session.cancel(long.request_id)
    _wait_idle(node)
    assert sum(len(c.tokens) for c in session.of(long.request_id)) < 200
    session.generate(short)  # the session goes on
    assert tokens(session.wait_finished(short.request_id)) == tokens(list(node.stub.Generate(short)))
    session.done_writing()
    assert session.ended.wait(10)
    logged = {entry["request_id"]: entry["outcome"] for entry in node.requests_logged()}
    assert logged[long.request_id] == "cancelled"


@pytest.mark.parametrize(
    ("request_", "code", "message"),
    [
        (node_request([1, 2], temperature=-1.0), pb.ERROR_CODE_INVALID_ARGUMENT, "temperature"),
        (node_request([1] * 300), pb.ERROR_CODE_INVALID_ARGUMENT, "context window"),
        (pb.GenerateRequest(prompt_token_ids=[1]), pb.ERROR_CODE_INVALID_ARGUMENT, "request_id missing"),
    ],
)
def test_a_bad_request_gets_an_error_chunk_and_the_session_goes_on(node, request_, code, message):
    session = OpenSession(node)
    session.generate(request_)
    good = node_request([3, 4], max_tokens=2)
    session.generate(good)
    [failed] = session.wait_finished(request_.request_id)
    assert failed.finish_reason == pb.FINISH_REASON_ERROR and failed.error_code == code
    assert message in failed.error and not failed.tokens
    assert len(tokens(session.wait_finished(good.request_id))) == 2
    session.done_writing()


def test_a_request_id_already_running_is_refused(node):
    session = OpenSession(node)
    first = node_request([1, 2, 3], max_tokens=30)
    session.generate(first)
    session.generate(first)
    chunks = session.wait_finished(first.request_id)
    errors = [c for c in chunks if c.finish_reason == pb.FINISH_REASON_ERROR]
    assert len(errors) == 1 and "already running" in errors[0].error
    assert errors[0].error_code == pb.ERROR_CODE_INVALID_ARGUMENT
    deadline = time.monotonic() + 30  # the first one still runs to its end
    while not any(c.finish_reason == pb.FINISH_REASON_LENGTH for c in session.of(first.request_id)):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert len(tokens(session.of(first.request_id))) == 30
    session.done_writing()


def test_ending_the_call_aborts_its_running_requests(node):
    session = OpenSession(node)
    requests = [node_request([1, 2, 3], max_tokens=200), node_request([7, 8], max_tokens=200)]
    for request in requests:
        session.generate(request)
    deadline = time.monotonic() + 10
    while node.stub.Stats(pb.StatsRequest()).num_running < 2:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    session.call.cancel()
    _wait_idle(node)
    deadline = time.monotonic() + 5  # the log lines arrive through the node's stderr
    while True:
        logged = {entry["request_id"]: entry["outcome"] for entry in node.requests_logged()}
        if all(logged.get(r.request_id) == "cancelled" for r in requests):
            break
        assert time.monotonic() < deadline, logged
        time.sleep(0.02)


@pytest.mark.integration
def test_sigterm_finishes_the_sessions_requests_then_closes_it(model_path):
    node = EdgeNode(model_path)
    session = OpenSession(node)
    request = node_request([1, 2, 3], max_tokens=40)
    session.generate(request)
    deadline = time.monotonic() + 10
    while not session.of(request.request_id):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    stopping = time.monotonic()
    os.kill(node.process.pid, signal.SIGTERM)
    chunks = session.wait_finished(request.request_id)
    assert len(tokens(chunks)) == 40 and chunks[-1].finish_reason == pb.FINISH_REASON_LENGTH
    assert session.ended.wait(10) and session.error is None  # closed by the node, cleanly
    assert node.process.wait(timeout=30) == 0
    assert time.monotonic() - stopping < 4  # no grace period spent waiting on the open session

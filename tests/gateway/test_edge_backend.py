"""EdgeBackend against a real edge node: requests on its Session streams (another opened only
while every open one is writing), deadlines, the node's errors as typed BackendErrors, and a
fresh stream after the node restarts."""

import asyncio

import pytest

from gateway.backends.base import BackendError
from gateway.backends.edge import SESSIONS_PER_NODE, EdgeBackend
from shared.proto import inference_pb2 as pb
from tests.fixtures.chunk_sinks import TokenRecorder
from tests.fixtures.edge_node import EdgeNode, node_request


async def _collect(backend: EdgeBackend, request: pb.GenerateRequest, timeout_s: float = 30) -> list[int]:
    recorder = TokenRecorder()
    await backend.run(request, recorder, timeout_s)
    return recorder.token_ids


async def _wait_idle(node: EdgeNode) -> None:
    for _ in range(200):
        if node.stub.Stats(pb.StatsRequest()).num_running == 0:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the node still runs a request")


async def test_concurrent_requests_match_generate_and_later_ones_reuse_an_open_stream(edge_node, backend):
    requests = [node_request([1, 2, 3], max_tokens=6), node_request([4, 5], max_tokens=4)]
    expected = [[t.token_id for c in edge_node.stub.Generate(r) for t in c.tokens] for r in requests]
    results = await asyncio.gather(*(_collect(backend, r) for r in requests))
    assert results == expected
    sessions = list(backend._sessions)
    assert 1 <= len(sessions) <= 2  # a second only if the first was still writing
    assert await _collect(backend, node_request([7], max_tokens=2)) and backend._sessions == sessions
    assert all(session.sinks == {} for session in sessions)  # finished requests leave nothing behind


async def test_a_stream_busy_writing_makes_the_next_request_open_another_up_to_the_limit(edge_node, backend):
    request = node_request([1, 2, 3], max_tokens=3)
    expected = [t.token_id for c in edge_node.stub.Generate(request) for t in c.tokens]
    assert await _collect(backend, request) == expected
    for opened in range(2, SESSIONS_PER_NODE + 1):
        for session in backend._sessions:
            session.writing += 1  # as while a write is in flight
        assert await _collect(backend, node_request([1, 2, 3], max_tokens=3)) == expected
        assert len(backend._sessions) == opened
        assert backend._sessions[-1].sinks == {}  # the request ran on the new stream
    backend._sessions[0].writing += 1
    assert await _collect(backend, node_request([1, 2, 3], max_tokens=3)) == expected
    assert len(backend._sessions) == SESSIONS_PER_NODE  # at the limit: the least busy stream
    for session in backend._sessions:
        session.writing -= 2 if session is backend._sessions[0] else 1


async def test_node_errors_become_typed_backend_errors(edge_node, backend):
    with pytest.raises(BackendError) as error:
        await _collect(backend, node_request([1, 2], temperature=-1.0))
    assert error.value.status == 400 and not error.value.retryable
    assert "temperature" in str(error.value)
    assert len(await _collect(backend, node_request([1, 2], max_tokens=3))) == 3  # the session goes on


async def test_a_deadline_ends_the_request_and_cancels_it_on_the_node(edge_node, backend):
    with pytest.raises(BackendError) as error:
        await _collect(backend, node_request([1, 2, 3], max_tokens=100), timeout_s=0.0)
    assert error.value.status == 504
    await _wait_idle(edge_node)


async def test_a_cancelled_request_is_cancelled_on_the_node(edge_node, backend):
    request = node_request([1, 2, 3], max_tokens=100)
    recorder = TokenRecorder()
    running = asyncio.create_task(backend.run(request, recorder, 30))
    await asyncio.wait_for(recorder.first.wait(), 30)
    running.cancel()  # as a client that went away
    with pytest.raises(asyncio.CancelledError):
        await running
    await _wait_idle(edge_node)
    for _ in range(100):  # the node's log line arrives through its stderr
        if any(e["request_id"] == request.request_id for e in edge_node.requests_logged()):
            break
        await asyncio.sleep(0.02)
    logged = {e["request_id"]: e for e in edge_node.requests_logged()}
    assert logged[request.request_id]["outcome"] == "cancelled"
    assert logged[request.request_id]["completion_tokens"] < 100


@pytest.mark.integration
async def test_after_the_node_restarts_the_next_request_opens_a_fresh_session(model_path):
    node = EdgeNode(model_path)
    backend = EdgeBackend("edge-a", f"127.0.0.1:{node.port}", frozenset({"tiny"}))
    await backend.start()
    try:
        assert len(await _collect(backend, node_request([1, 2], max_tokens=3))) == 3
        [first_session] = backend._sessions
        assert node.stop() == 0  # SIGTERM: the node closes its sessions, then exits
        with pytest.raises(BackendError) as error:  # nothing listens: a retryable failure
            await _collect(backend, node_request([1, 2], max_tokens=3))
        assert error.value.retryable
        node = EdgeNode(model_path, port=node.port)
        for _ in range(100):  # the channel reconnects with backoff
            try:
                tokens = await _collect(backend, node_request([1, 2], max_tokens=3))
                break
            except BackendError:
                await asyncio.sleep(0.1)
        assert len(tokens) == 3 and first_session not in backend._sessions
    finally:
        await backend.close()
        node.stop()

"""How the router reads a node's pace off the tokens as they arrive (gateway/routing/node_load.py): when
its running requests are expected to end (a waiting request's slot), and the TPOT a new request
there is predicted to get."""

import random

import pytest

from gateway.routing.policy import route
from gateway.routing.prediction import predict
from tests.gateway.test_router import _cloud, _edge, _request


def test_a_waiting_request_sees_the_running_ones_end_at_their_own_pace(monkeypatch):
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _edge(max_running=2, rtt_s=0.0, decode_steps=((2, 0.05),))
    slow = node.load.dispatch(0, 2.0, 20)  # predicted to end at 2 s, 20 tokens
    assert node.load.slot_free_at(2, now=0.0, step_s=0.05) is None  # a slot is free
    fast, queued = node.load.dispatch(0, 2.0, 20), node.load.dispatch(0, 4.0, 20)
    for index in range(11):  # slow: one token per 0.5 s; fast: two per 0.5 s, for 2.5 s
        clock[0] = index * 0.5
        slow.advance(1)
        if index < 6:
            fast.advance(2)
    now = clock[0]  # 5 s
    assert slow.expected_end(now, 0.05) == pytest.approx(5.0 + 9 * 0.5)  # its own pace, not "2 s"
    assert fast.expected_end(now, 0.05) == pytest.approx(now)  # 12 of 20 tokens, then silent: overdue
    assert queued.expected_end(now, 0.05) == pytest.approx(now + 20 * 0.05)  # its prediction passed
    assert node.load.slot_free_at(2, now, 0.05) == pytest.approx(now + 20 * 0.05)  # the 2nd earliest
    prediction = predict(node, _request(prompt=100, output=10), now=now)
    assert prediction.ttft_s == pytest.approx(20 * 0.05 + 100 / 100)
    fast.finished()
    assert node.load.slot_free_at(2, now, 0.05) == pytest.approx(now + 20 * 0.05)  # the earliest


def test_a_pace_slowed_by_queued_prompts_lasts_only_as_long_as_they_do(monkeypatch):
    """Two running requests paced at 2.5 s a token through prompt steps; 500 prompt tokens are
    still queued there (5 s at 100 tokens/s): each one's end is then its 30 tokens left at the
    step time, not at its pace (75 s). A request still computing its prompt keeps its prediction.
    The 500 tokens sent within the prompt window take half the node's time: steps count double."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _cloud(max_running=3, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((3, 0.1),))
    running = [node.load.dispatch(0, 100.0, 32) for _ in range(2)]
    for index in range(2):
        clock[0] = index * 2.5
        for request in running:
            request.advance(1)
    prefilling = node.load.dispatch(500, 90.0, 32)  # the third slot's
    now = clock[0]
    assert running[0].expected_end(now, 0.1) == pytest.approx(now + 30 * 2.5)  # no backlog: its pace
    assert running[0].expected_end(now, 0.1, 5.0) == pytest.approx(now + 5.0 + 30 * 0.1)
    assert prefilling.expected_end(now, 0.1, 5.0) == pytest.approx(90.0)  # not decoding yet
    share = 500 / node_load.PROMPT_WINDOW_S / 100.0
    assert node.load.prompt_share(now, 100.0, 3) == pytest.approx(share) == pytest.approx(0.5)
    prediction = predict(node, _request(prompt=100, output=10), now=now)
    assert prediction.tpot_s == pytest.approx(0.1 / (1 - share))
    assert prediction.ttft_s == pytest.approx(5.0 + 30 * prediction.tpot_s + 100 / 100)  # a slot frees


def test_a_running_request_is_expected_to_end_at_its_recent_pace(monkeypatch):
    """Its first two tokens came 3 s apart (a prompt step beside it), the next seven 0.1 s apart:
    its 31 tokens left take 3.1 s, not 31 x its mean of 0.46 s since its first."""
    import gateway.routing.dispatched_request as dispatched_request
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _cloud()
    request = node.load.dispatch(0, 100.0, 40)
    times = [0.0, 3.0] + [3.0 + 0.1 * step for step in range(1, dispatched_request.RECENT_CHUNKS)]
    for moment in times:
        clock[0] = moment
        request.advance(1)
    assert request.num_tokens == len(times) == 9
    remaining = 40 - request.num_tokens
    assert request.expected_end(clock[0], 0.05) == pytest.approx(clock[0] + remaining * 0.1)


def test_tpot_counts_the_prompts_sent_to_the_node_lately(monkeypatch):
    """The step table says 50 ms at 5 requests; 2,000 prompt tokens sent there within the prompt
    window, at 400 prompt tokens/s, take half its time: one more request there is predicted a
    token per 100 ms. Once they are past the window, the table again; another node meets a
    70 ms TPOT target meanwhile."""
    import gateway.routing.node_load as node_load

    clock = [100.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _cloud(decode_steps=((1, 0.02), (4, 0.05), (8, 0.07)), rtt_s=0.0, prefill_tokens_per_s=400.0)
    running = [node.load.dispatch(500, 0.0, 64) for _ in range(4)]
    share = 4 * 500 / node_load.PROMPT_WINDOW_S / 400.0
    assert share == pytest.approx(0.5)
    busy = predict(node, _request(output=10), now=clock[0])
    assert busy.tpot_s == pytest.approx(0.055 / (1 - share))
    assert busy.raw_tpot_s == pytest.approx(busy.tpot_s)  # what calibration learns against
    assert busy.e2e_s == pytest.approx(busy.ttft_s + 10 * busy.tpot_s)
    other = _cloud(node_id="cloud-2", decode_steps=((1, 0.06),), prefill_tokens_per_s=200.0)
    meeting = _request(output=10, tpot_s=0.07)
    assert route(meeting, [node, other], clock[0], random.Random(0)).node_id == "cloud-2"
    for request in running:
        request.first_token()
    clock[0] += node_load.PROMPT_WINDOW_S  # the prompts are computed and past the window
    assert node.load.prompt_share(clock[0], 400.0) == 0.0
    assert predict(node, _request(output=10), now=clock[0]).tpot_s == pytest.approx(0.055)
    assert route(meeting, [node, other], clock[0], random.Random(0)).node_id == "cloud-1"


def test_a_saturated_node_is_predicted_slow_not_stalled(monkeypatch):
    """Prompt work beyond the node's prefill rate: its decodes are predicted at
    1 / (1 - MAX_PROMPT_SHARE) times the step, a finite number the router can compare."""
    import gateway.routing.node_load as node_load

    monkeypatch.setattr(node_load.time, "monotonic", lambda: 50.0)
    node = _cloud(decode_steps=((1, 0.02),), rtt_s=0.0, prefill_tokens_per_s=100.0)
    node.load.dispatch(100_000, 0.0, 8)
    assert node.load.prompt_share(50.0, 100.0) == node_load.MAX_PROMPT_SHARE
    prediction = predict(node, _request(output=4), now=50.0)
    assert prediction.tpot_s == pytest.approx(0.02 / (1 - node_load.MAX_PROMPT_SHARE))
    assert node.load.prompt_share(49.0, 100.0) == 0.0  # sent after that moment: not counted


def test_an_overdue_request_without_a_token_still_waits_for_its_prompt(monkeypatch):
    """Three requests of 200 prompt tokens on a full two-slot node (100 tokens/s), predicted to
    end at 1 s and at 5 s still without a token: each ends after the prompt work sent up to it
    and its own, then its 10 tokens, not at once. A new request gets the slot of the second of
    them, but its first token comes after the 600 prompt tokens ahead of it (6 s, later than that
    slot) and its own."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _cloud(max_running=2, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 0.1),))
    for _ in range(3):
        node.load.dispatch(200, 1.0, 10)
    now = clock[0] = 5.0
    assert node.load.end_times(now, 0.1, 6.0) == pytest.approx([now + 2 + 1, now + 4 + 1, now + 6 + 1])
    share = 400 / node_load.PROMPT_WINDOW_S / 100.0  # two prompts: the third waits for a slot
    assert node.load.prompt_share(now, 100.0, 2) == pytest.approx(share)
    step_s = 0.1 / (1 - share)
    assert node.load.slot_free_at(2, now, step_s, 6.0) == pytest.approx(now + 4 + 10 * step_s)
    prediction = predict(node, _request(prompt=100, output=10), now=now)
    assert prediction.ttft_s == pytest.approx(600 / 100 + 100 / 100)


def test_a_request_waiting_past_its_prediction_delays_the_nodes_ttft(monkeypatch):
    """Predicted a 2 s first token and still without one at 10 s: the node is 8 s behind, and a
    new request there is predicted 8 s later (calibration learns only at the first token); a
    request within OVERDUE_MARGIN_S of its prediction, or one with its token, proves nothing.
    Added, not a ratio: the other request, predicted at 0.5 s, is late by 3.5 s, not 8x."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _edge(max_running=4, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 0.05),))
    late = node.load.dispatch(0, 3.0, 10, predicted_ttft_s=2.0)
    clock[0] = 2.5
    assert node.load.overdue_lag_s(clock[0]) == 0.0  # within the margin
    clock[0] = 6.0
    node.load.dispatch(0, 20.0, 10, predicted_ttft_s=0.5)
    clock[0] = 10.0
    assert node.load.overdue_lag_s(clock[0]) == pytest.approx(10.0 - 2.0)
    raw = 100 / 100
    assert predict(node, _request(prompt=100, output=10), now=10.0).ttft_s == pytest.approx(raw + 8.0)
    late.advance(1)
    assert node.load.overdue_lag_s(clock[0]) == pytest.approx(4.0 - 0.5)  # the other one now
    assert predict(node, _request(prompt=100, output=10), now=10.0).ttft_s == pytest.approx(raw + 3.5)


def test_a_slot_wait_read_off_the_running_requests_is_not_scaled_again(monkeypatch):
    """A node whose TTFT runs 3x its prediction, full with two requests paced at 0.1 s a token
    (10 tokens left each): a new request waits 1 s for a slot (their calibrated ends), then its
    own prompt at 3x; the wait is not tripled too."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _edge(max_running=2, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 0.05),))
    node.calibration.ttft_factor = 3.0
    running = [node.load.dispatch(0, 100.0, 12) for _ in range(2)]
    for index in range(2):
        clock[0] = index * 0.1
        for request in running:
            request.advance(1)
    prediction = predict(node, _request(prompt=100, output=10), now=clock[0])
    assert prediction.ttft_s == pytest.approx(10 * 0.1 + 3.0 * 100 / 100)
    assert prediction.raw_ttft_s == pytest.approx(10 * 0.1 + 100 / 100)


def test_prompts_waiting_for_a_slot_do_not_slow_the_running_requests(monkeypatch):
    """A two-slot edge decodes two chats; four 500-token documents wait for their slots. Their
    prompts are computed as slots free, not beside the running chats now: the share counts the
    chats' 100-token prompts only, and a new request there is predicted the table's step, not
    ten times it. The running ones are paced at 0.1 s a token against a step calibrated 10x
    late: the queued requests' tokens take the pace, the shorter of the two. Its slot frees at
    the fifth end, but its first token waits for the documents' prompts, computed before its own."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _edge(max_running=2, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 0.1),))
    chats = [node.load.dispatch(100, 60.0, 20) for _ in range(2)]
    documents = [node.load.dispatch(500, 1.0, 10) for _ in range(4)]  # predicted ends passed
    assert node.load.queued_requests(2) == documents
    assert node.load.prompt_share(0.0, 100.0) == node_load.MAX_PROMPT_SHARE  # without the slots
    assert node.load.prompt_share(0.0, 100.0, 2) == pytest.approx(200 / node_load.PROMPT_WINDOW_S / 100)
    for tick in range(3):
        clock[0] = 2.0 + tick * 0.1
        for chat in chats:
            chat.advance(1)
    node.calibration.tpot_factor = 10.0
    now = clock[0]
    assert node.load.running_pace_s() == pytest.approx(0.1)
    backlog_s = 2000 / 100  # the documents' prompts; each ends after its share, then 10 tokens
    ends = node.load.end_times(now, 0.1, backlog_s)
    documents_end = [now + backlog_s * k / 4 + 10 * 0.1 for k in range(1, 5)]
    assert ends == pytest.approx([now + 17 * 0.1] * 2 + documents_end)
    prediction = predict(node, _request(prompt=100, output=10), now=now)
    assert node.load.slot_free_at(2, now, 0.1, backlog_s) == pytest.approx(documents_end[2])  # 5th end
    assert prediction.ttft_s == pytest.approx(backlog_s + 100 / 100)  # after the documents' prompts


def test_requests_ahead_of_unknown_ends_are_served_at_the_measured_pace(monkeypatch):
    """A full two-slot node with another gateway's request there (so the ends of the requests
    ahead are unknown): the two queued ahead are each served in turn, their tokens at the 0.1 s
    pace the running ones show, not at the table's 1 s step (an edge whose chats ran 0.13 s a
    token was predicted 80 s for a first token it gave in 15)."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _edge(max_running=2, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 1.0),))
    running = [node.load.dispatch(0, 60.0, 20) for _ in range(2)]
    for tick in range(3):
        clock[0] = 1.0 + tick * 0.1
        for request in running:
            request.advance(1)
    node.load.report(num_requests=3, num_prompt_tokens=0)
    assert node.load.running_pace_s() == pytest.approx(0.1)
    prediction = predict(node, _request(prompt=100, output=10), now=clock[0])
    service = 100 / 100 + 10 * 0.1
    assert prediction.ttft_s == pytest.approx(2 * service / 2 + 100 / 100)


def test_a_queued_request_ends_after_its_prompt_and_tokens_at_the_pace_once_there_is_one(monkeypatch):
    """A request queued on a full two-slot node, predicted at dispatch to end at 60 s (the TPOT
    of a passing prompt burst): before the node's requests have a pace, that prediction stands;
    once they decode at 0.1 s a token, it ends no later than after its 1 s prompt and 10 tokens."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _edge(max_running=2, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 0.1),))
    running = [node.load.dispatch(0, 60.0, 20) for _ in range(2)]
    node.load.dispatch(100, 60.0, 10)
    assert node.load.end_times(0.0, 0.1, 1.0, 2) == pytest.approx([60.0] * 3)  # no pace yet
    for tick in range(3):
        clock[0] = 1.0 + tick * 0.1
        for request in running:
            request.advance(1)
    now = clock[0]
    running_end, queued_end = now + 17 * 0.1, now + 1.0 + 10 * 0.1
    assert node.load.end_times(now, 0.1, 1.0, 2) == pytest.approx([running_end, running_end, queued_end])

"""NodeLoad's recent prompt work: the running sum read on every routing decision equals the walk
over the window it replaced, at every moment (those aged out since the last dispatch left out,
those sent after a `now` in the past too)."""

import pytest

from tests.gateway.test_router import _cloud


def test_the_running_sum_is_the_window_at_every_moment(monkeypatch):
    import gateway.routing.node_load as node_load

    clock = [100.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    node = _cloud(prefill_tokens_per_s=1e9)
    for step, tokens in enumerate((300, 0, 50, 700, 20, 1000, 5)):
        clock[0] = 100.0 + 3.0 * step  # the window (10 s) holds three or four of them
        node.load.dispatch(tokens, 0.0, 4)
        for now in (clock[0] - 4.0, clock[0], clock[0] + 2.5, clock[0] + 7.0, clock[0] + 10.0):
            since = now - node_load.PROMPT_WINDOW_S
            walked = sum(count for at, count in node.load.recent_prompts if since < at <= now)
            share = walked / node_load.PROMPT_WINDOW_S / 1e9
            assert node.load.prompt_share(now, 1e9) == pytest.approx(share, abs=0.0)
    assert node.load.recent_prompt_tokens == 700 + 20 + 1000 + 5  # sent at 109-118 s: kept at 118 s

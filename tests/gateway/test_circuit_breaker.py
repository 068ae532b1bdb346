"""The circuit breaker (gateway/routing/circuit_breaker.py): a node is taken out by a failure
rate over a window, not by one error; half-open, one trial request decides."""

from gateway.routing.circuit_breaker import BreakerRules, CircuitBreaker
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState

RULES = BreakerRules(cooldown_s=5.0, max_cooldown_s=12.0, window_s=10.0, min_failures=3, failure_rate=0.5)


def _node() -> NodeState:
    return NodeState("edge-1", NodeKind.EDGE, frozenset({"m"}))


def test_one_failure_among_answers_takes_no_node_out_a_failure_rate_does():
    node, breaker = _node(), CircuitBreaker(RULES)
    for second in range(30):  # 1 dropped connection in 30 requests
        breaker.succeeded(node, float(second))
    assert breaker.failed(node, 30.0) is False
    assert node.cooldown_until == 0.0
    # 30 s later the window holds only what follows: 4 answers, then failures
    for second in range(4):
        breaker.succeeded(node, 60.0 + second / 10)
    assert [breaker.failed(node, 61.0 + i) for i in range(3)] == [False, False, False]  # 3 of 7
    assert breaker.failed(node, 64.0) is True  # 4 failures of 8: taken out for cooldown_s
    assert (node.cooldown_until, breaker.num_failures, len(breaker.outcomes)) == (69.0, 4, 8)


def test_a_node_failing_every_request_is_out_after_min_failures_and_outcomes_age_out():
    node, breaker = _node(), CircuitBreaker(RULES)
    assert [breaker.failed(node, t) for t in (0.0, 1.0)] == [False, False]
    assert breaker.failed(node, 20.0) is False  # the two before left the window
    assert (breaker.num_failures, len(breaker.outcomes)) == (1, 1)
    assert [breaker.failed(node, t) for t in (21.0, 22.0)] == [False, True]
    assert node.cooldown_until == 27.0


def test_half_open_one_trial_request_closes_it_or_opens_it_twice_as_long():
    node, breaker = _node(), CircuitBreaker(RULES)
    breaker.failed(node, 0.0, is_conclusive=True)  # a hung node: out at once
    assert node.cooldown_until == 5.0
    breaker.dispatched(node, 2.0)  # open: no trial (a request the router sent before)
    assert (breaker.is_trial_running, node.cooldown_until) == (False, 5.0)
    assert breaker.failed(node, 3.0) is False  # open already: counts for nothing
    breaker.dispatched(node, 6.0)  # half-open: this request is the trial, others held off
    assert (breaker.is_trial_running, node.cooldown_until) == (True, 6.0 + RULES.trial_s)
    assert breaker.failed(node, 7.0) is True  # the trial failed: out for 10 s
    assert node.cooldown_until == 17.0
    breaker.dispatched(node, 17.0)
    assert breaker.failed(node, 18.0) is True  # again: 20 s, capped at 12
    assert node.cooldown_until == 30.0
    breaker.dispatched(node, 30.0)
    breaker.succeeded(node, 30.5)  # the trial's first token: closed, its past forgotten
    assert (node.cooldown_until, breaker.open_s, len(breaker.outcomes)) == (0.0, None, 0)
    assert breaker.failed(node, 31.0) is False

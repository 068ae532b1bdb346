"""Taking a node out of routing on evidence, not on one error. No I/O.

A node is closed (routed to) until, among the outcomes of the requests it was given in the last
`window_s`, at least `min_failures` failed and at least `failure_rate` of them did: it is then
open for `cooldown_s` (its NodeState.cooldown_until: the router skips it and a request nothing
else can take is refused as `node_cooling_down`, with the seconds left). Then it is half-open:
the next request it is given is the trial, and holds the others off for `trial_s` while it
runs; the trial's first token closes it (its window forgotten), its failure opens it again for
twice as long, up to `max_cooldown_s`. One dropped connection among a stream of answers (the
rate of 1 in 30) takes no node out; a node that fails every request is out after `min_failures`,
and one that gave no token to any request for a whole first-token deadline (hung) at once.
A node's health probes are the other evidence (three failed in a row: gateway/backends/upstream.py).
"""

from collections import deque
from dataclasses import dataclass

from gateway.routing.node_state import NodeState


@dataclass(frozen=True, slots=True)
class BreakerRules:
    cooldown_s: float = 5.0  # the first open period
    max_cooldown_s: float = 60.0  # doubled after each failed trial, up to this
    window_s: float = 10.0  # outcomes older than this are forgotten
    min_failures: int = 3  # in the window, before the rate counts
    failure_rate: float = 0.5  # failed / outcomes in the window that opens it
    trial_s: float = 5.0  # how long a half-open node's trial request holds the others off


class CircuitBreaker:
    """One node's recent outcomes and whether it is open. Keeps true: `num_failures` is the
    number of failed outcomes in `outcomes`; the node's cooldown is set only by opening (or a
    trial), and cleared only by a trial's success."""

    __slots__ = ("is_trial_running", "num_failures", "open_s", "outcomes", "rules")

    def __init__(self, rules: BreakerRules):
        self.rules = rules
        self.outcomes: deque[tuple[float, bool]] = deque()  # (when, failed), oldest first
        self.num_failures = 0
        self.open_s: float | None = None  # None: closed; else how long it was last opened
        self.is_trial_running = False

    def dispatched(self, node: NodeState, now: float) -> None:
        """A request goes to the node: when half-open, it is the trial."""
        if self.open_s is not None and not self.is_trial_running and node.cooldown_until <= now:
            self.is_trial_running = True
            node.cooldown_until = now + self.rules.trial_s

    def succeeded(self, node: NodeState, now: float) -> None:
        """A request got its first token there."""
        if self.open_s is None:
            self._add(now, failed=False)
        elif self.is_trial_running:
            self.open_s, self.is_trial_running = None, False
            self.outcomes.clear()
            self.num_failures = 0
            node.cooldown_until = 0.0

    def failed(self, node: NodeState, now: float, is_conclusive: bool = False) -> bool:
        """A request failed there; True when this opened the breaker. `is_conclusive`: evidence
        enough alone (the node gave no token to any request for a whole first-token deadline)."""
        if self.open_s is not None:  # open already: only a trial's failure counts
            if not self.is_trial_running:
                return False
            self._open(node, now, min(self.rules.max_cooldown_s, 2 * self.open_s))
            return True
        self._add(now, failed=True)
        rules = self.rules
        too_few = self.num_failures < rules.min_failures
        too_rare = self.num_failures < rules.failure_rate * len(self.outcomes)
        if not is_conclusive and (too_few or too_rare):
            return False
        self._open(node, now, rules.cooldown_s)
        return True

    def _open(self, node: NodeState, now: float, seconds: float) -> None:
        self.open_s, self.is_trial_running = seconds, False
        node.cooldown_until = now + seconds

    def _add(self, now: float, failed: bool) -> None:
        self.outcomes.append((now, failed))
        self.num_failures += failed
        while self.outcomes and self.outcomes[0][0] < now - self.rules.window_s:
            _, old_failed = self.outcomes.popleft()
            self.num_failures -= old_failed

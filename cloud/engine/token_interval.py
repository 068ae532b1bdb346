"""The time between a decoding request's tokens, as the engine's step cost model learns it.

A step's own compute is not all a decoding request waits: when steps follow each other at once,
the work between them (scheduling, handing the tokens to the server, the server's own threads)
lies between two tokens too. Under `hybridgw up` that work made chats' time per token 205-234 ms
where the steps were kept within 160, so the latency limits learn from the interval since the
previous step's tokens instead.
"""

import time


class TokenIntervalClock:
    def __init__(self) -> None:
        self._last_step_ended: float | None = None  # when the last step ended, if work was left

    def step_ended(self, step_started: float, work_left: bool) -> float:
        """Seconds since the previous step's tokens (since `step_started`, on time.perf_counter's
        clock, when no step ran just before); `work_left`: whether another step follows at once."""
        ended = time.perf_counter()
        since = self._last_step_ended if self._last_step_ended is not None else step_started
        self._last_step_ended = ended if work_left else None
        return ended - since

    def idle(self) -> None:
        """A step with nothing to do: the next one starts a new interval."""
        self._last_step_ended = None

"""A generation as the handler sees it: where it runs, one ChoiceSink per choice (the tokens'
one path, gateway/output/token_sink.py), the tasks that feed them from the node, and the usage."""

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from gateway.output.token_sink import ChoiceSink
from gateway.privacy import PrivacyDecision
from gateway.routing.dispatched_request import Dispatched
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Prediction


class ClientGone(Exception):
    """The client closed its connection: the generation stops and its node work is cancelled."""


@dataclass(slots=True)
class Generation:
    request_id: str
    model: str
    node: NodeState
    route_reason: str
    prompt_tokens: int
    privacy: PrivacyDecision
    prediction: Prediction | None = None  # what the router expected of the node
    sinks: list[ChoiceSink] = field(default_factory=list)
    tasks: list[asyncio.Task] = field(default_factory=list)  # one per choice: the node request
    dispatches: list[Dispatched] = field(default_factory=list)  # each choice's count on its node
    started: float = field(default_factory=time.perf_counter)  # this attempt on this node
    observed: tuple[float | None, float | None] | None = None  # (ttft, tpot) ratios, once closed
    ttft_learned: bool = False  # the node's calibration has learned this request's TTFT
    observed_ttft: float | None = None  # its observed/predicted ratio, if there was one to learn
    received: float | None = None  # when routing began (the first attempt's): the client's wait
    receipt: str | None = None  # the privacy ledger's record of this dispatch
    predicted_cached_tokens: int = 0  # prompt tokens the router expected the node's cache to hold
    alternatives: tuple[Prediction, ...] = ()  # what the router predicted of every candidate

    def __post_init__(self) -> None:
        if self.received is None:
            self.received = self.started

    @property
    def node_id(self) -> str:
        return self.node.node_id

    @property
    def target(self) -> str:
        return self.node.kind.value

    @property
    def completion_tokens(self) -> int:
        return sum(sink.completion_tokens for sink in self.sinks)

    @property
    def cached_tokens(self) -> int:
        return max((sink.cached_tokens for sink in self.sinks), default=0)

    @property
    def first_token_at(self) -> float | None:
        return min((s.first_token_at for s in self.sinks if s.first_token_at is not None), default=None)

    async def first_tokens(self) -> None:
        """Returns once every choice has its first token; raises the first failure."""
        for sink in self.sinks:
            await sink.first_token()

    async def wait(self) -> None:
        """Returns once every choice finished; raises the first failure (BackendError, ClientGone)."""
        for sink in self.sinks:
            await sink.wait()

    def client_gone(self) -> None:
        for sink in self.sinks:
            sink.fail(ClientGone())

    def release(self) -> None:
        """The request no longer counts on its node (idempotent)."""
        for dispatched in self.dispatches:
            dispatched.finished()

    async def close(self) -> None:
        """Ends every choice's node request (an unfinished one is cancelled on its node)."""
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.release()

    def calibrate_ttft(self) -> None:
        """Teaches the node's calibration this request's TTFT against its prediction, as soon as
        every choice has its first token (learned at the end, a burst's 20 s answers had left the
        cloud's TTFT predicted 2-3x too low for all of the burst)."""
        first_token_at = self.first_token_at
        if self.prediction is None or first_token_at is None or self.ttft_learned:
            return
        self.ttft_learned = True
        elapsed = first_token_at - self.started
        self.observed_ttft = self.node.calibration.observe_ttft(self.prediction.raw_ttft_s, elapsed)

    def calibrate(self) -> None:
        """Teaches the node's calibration what this request's TPOT was (and its TTFT, if not yet)
        against their prediction; `observed` keeps the observed/predicted ratios (for the
        metrics)."""
        first_token_at = self.first_token_at
        if self.prediction is None or first_token_at is None:
            return
        self.calibrate_ttft()
        calibration, prediction = self.node.calibration, self.prediction
        tpot = None
        per_choice = self.completion_tokens // max(1, len(self.sinks))
        if per_choice >= 2:
            seconds = (time.perf_counter() - first_token_at) / (per_choice - 1)
            tpot = calibration.observe_tpot(prediction.raw_tpot_s, seconds)
        self.observed = (self.observed_ttft, tpot)

"""The privacy gate a request passes before anything of it leaves: its privacy decision, made on
exactly what would leave (gateway/privacy/: by key, by header, or because it carries personal
data), and that decision recorded in the privacy ledger before any node request leaves (no
record, no dispatch: gateway/dispatch/recorded_dispatch.py)."""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gateway.dispatch.recorded_dispatch import ledger_unavailable
from gateway.observability.metrics import GatewayMetrics
from gateway.privacy import PrivacyDecision, classify_async
from gateway.privacy.ledger import LedgerUnavailableError, PrivacyLedger
from gateway.request.prepared_request import PreparedRequest
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState


class WouldLeave(Protocol):
    """What would leave the gateway for a request (gateway/dispatch/outbound_messages.py)."""

    def texts(self, decode: Callable[[list[int]], str]) -> list[str]: ...

    def size(self) -> int: ...

    def payload(self) -> bytes: ...


@dataclass(slots=True)
class PrivacyGate:
    metrics: GatewayMetrics
    ledger: PrivacyLedger | None = None  # every routing decision recorded (gateway/privacy/ledger.py)

    async def classify(self, prepared: PreparedRequest, outbound: WouldLeave) -> PrivacyDecision:
        """The request's privacy decision, from what would leave the gateway; a continuation of a
        stored private conversation stays private."""
        context = prepared.context
        texts = functools.partial(outbound.texts, prepared.model.tokenizer.decode)
        size = outbound.size() + 4 * prepared.num_prompt_tokens  # prompts, grammars, tool fields
        images = len(prepared.body.image_parts)
        privacy = await classify_async(texts, context.privacy_mode, context.privacy_header, images, size)
        if prepared.body.continues_private and not privacy.is_private:  # its stored history was
            privacy = PrivacyDecision(True, "stored_private", (), privacy.stages)
        if privacy.is_private and privacy.reason != "key":
            self.metrics.privacy_forced.labels(privacy.reason).inc()
        return privacy

    async def record(
        self,
        prepared: PreparedRequest,
        privacy: PrivacyDecision,
        outbound: WouldLeave,
        node: NodeState | None,
        outcome: str,
    ) -> str | None:
        """The decision stored in the privacy ledger (its receipt id), when the gateway keeps
        one; APIError 503 when it cannot be stored (no record, no dispatch)."""
        if self.ledger is None:
            return None
        decision = {
            "request_id": prepared.request_id,
            "tenant": prepared.context.tenant,
            "private": privacy.is_private,
            "reason": privacy.reason,
            "kinds": list(privacy.kinds),
            "stages": dict(privacy.stages),
            "node": node.node_id if node is not None else None,
            "node_kind": node.kind.value if node is not None else None,
            "on_prem": node is not None and node.kind is NodeKind.EDGE,
            "outcome": outcome,
        }
        try:
            return await self.ledger.append(decision, outbound.payload())
        except LedgerUnavailableError as error:
            raise ledger_unavailable(error) from None

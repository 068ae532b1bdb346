"""No record, no dispatch: a node request leaves only once its routing decision is stored in the
privacy ledger (gateway/privacy/ledger.py); a decision that cannot be stored refuses the request
with a 503 naming the cause, and every answer to a recorded decision carries its receipt."""

import asyncio
import logging
from collections.abc import Awaitable, Callable

import orjson

from gateway.core.errors import APIError
from gateway.privacy.ledger import LedgerUnavailableError

logger = logging.getLogger("hybridgw.gateway")
RECEIPT_HEADER = "X-Hybridgw-Privacy-Receipt"
RETRY_AFTER_S = 5


def ledger_unavailable(error: LedgerUnavailableError) -> APIError:
    """The 503 of a request whose decision could not be recorded (no node saw it)."""
    logger.error(orjson.dumps({"event": "privacy_ledger_unavailable", "error": str(error)}).decode())
    return APIError(
        503,
        "The privacy ledger cannot record this request's routing decision, so it was sent to no "
        f"node: {error.reason}.",
        "server_error",
        code="privacy_ledger_unavailable",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def with_receipt(receipt: str | None, raiser: Callable[..., None]) -> Callable[..., None]:
    """`raiser`, its APIError carrying the receipt of the decision it answers."""

    def call(*args) -> None:
        try:
            raiser(*args)
        except APIError as error:
            if receipt is not None:
                error.headers[RECEIPT_HEADER] = receipt
            raise

    return call


async def once_recorded(recorded: asyncio.Future | None, run: Callable[[], Awaitable[None]]) -> None:
    """`run()` (a choice's node request) once `recorded` (its decision's record) is stored; never
    when it failed (the dispatcher answers the request with the failure)."""
    if recorded is not None:
        try:
            await asyncio.shield(recorded)
        except APIError:
            return
    await run()

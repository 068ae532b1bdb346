"""A request that continues a stored response (Responses' `previous_response_id`): its messages
become the stored conversation followed by its own input, its own instructions first (a
response's instructions are not carried over, as OpenAI does), and it is private if the stored
one was. After an answer with `store`, the conversation through that answer is kept
(gateway/dialects/openai_responses_store.py)."""

import logging
from dataclasses import dataclass

from gateway.core.generation_request import GenerationRequest
from gateway.dialects.openai_responses_store import StoredResponse
from gateway.dialects.responses_input_items import input_items

logger = logging.getLogger("hybridgw.gateway")


@dataclass(frozen=True, slots=True)
class ResponsesFields:
    """What only the Responses dialect reads of a request (its `dialect_fields`)."""

    store: bool = False  # kept for a later previous_response_id (gateway/dialects/openai_responses_store.py)
    previous_response_id: str | None = None  # the stored response this one continues
    instructions: str | None = None  # the system turn first in `messages` (not stored)


def _own_messages(request: GenerationRequest) -> list[dict]:
    return request.messages[1:] if request.dialect_fields.instructions else request.messages


async def continue_stored(store, tenant: str, request: GenerationRequest) -> None:
    """`request` with the stored conversation it names put before its own input (404 if none)."""
    fields: ResponsesFields = request.dialect_fields
    if fields.previous_response_id is None:
        return
    stored = await store.get(tenant, fields.previous_response_id)
    head = request.messages[:1] if fields.instructions else []
    request.messages = [*head, *stored.messages, *_own_messages(request)]
    request.continues_private = stored.private


async def keep(store, tenant: str, fmt, request: GenerationRequest, private: bool) -> None:
    """With `store`, the conversation through the answer `fmt` wrote (its assistant turns), kept
    under the response's id with the response object answered and its own input as items; a store
    that fails is logged, the answer already given stands."""
    if not request.dialect_fields.store:
        return
    own = _own_messages(request)
    private = private or request.continues_private
    response = getattr(fmt, "answered", None)  # the response object as answered
    stored = StoredResponse([*own, *fmt.answer_messages()], private, response, input_items(own, fmt.id))
    try:
        await store.put(tenant, fmt.id, stored)
    except Exception as error:
        logger.warning('{"event": "response_not_stored", "error": "%s"}', type(error).__name__)

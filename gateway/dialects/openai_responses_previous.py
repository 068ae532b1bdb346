"""A request that continues a stored response (Responses' `previous_response_id`): its messages
become the stored conversation followed by its own input, its own instructions first (a
response's instructions are not carried over, as OpenAI does), and it is private if the stored
one was. After an answer with `store`, the conversation through that answer is kept
(gateway/dialects/openai_responses_store.py)."""

import logging

from gateway.core.generation_request import GenerationRequest
from gateway.dialects.openai_responses_store import StoredResponse

logger = logging.getLogger("hybridgw.gateway")


def _own_messages(request: GenerationRequest) -> list[dict]:
    return request.messages[1:] if request.instructions else request.messages


async def continue_stored(store, tenant: str, request: GenerationRequest) -> None:
    """`request` with the stored conversation it names put before its own input (404 if none)."""
    if request.previous_response_id is None:
        return
    stored = await store.get(tenant, request.previous_response_id)
    head = request.messages[:1] if request.instructions else []
    request.messages = [*head, *stored.messages, *_own_messages(request)]
    request.continues_private = stored.private


async def keep(
    store, tenant: str, response_id: str, request: GenerationRequest, answer: list[dict], private: bool
):
    """The conversation through `answer` (its assistant turns), kept under the response's id; a
    store that fails is logged, the answer already given stands."""
    stored = StoredResponse([*_own_messages(request), *answer], private or request.continues_private)
    try:
        await store.put(tenant, response_id, stored)
    except Exception as error:
        logger.warning('{"event": "response_not_stored", "error": "%s"}', type(error).__name__)

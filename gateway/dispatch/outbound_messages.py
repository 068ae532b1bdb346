"""What leaves the gateway for one request, built once before it is routed: every choice's
`GenerateRequest` (what a node or the cloud queue receives) and the client's own fields that an
upstream on `api = "chat"` takes as sent. The privacy decision reads exactly these objects
(gateway/privacy/outbound.py), and the dispatch sends exactly these objects."""

from dataclasses import dataclass

import orjson

from gateway.backends.client_request import ClientRequest
from gateway.dispatch.choice_launch import node_request
from gateway.privacy.outbound import outbound_texts
from gateway.request.prepared_request import PreparedRequest
from gateway.tools.tool_call_formats import tool_call_format
from shared.proto import inference_pb2 as pb


@dataclass(frozen=True, slots=True)
class OutboundRequest:
    requests: tuple[pb.GenerateRequest, ...]  # one per choice
    client: ClientRequest

    @classmethod
    def of(cls, prepared: PreparedRequest) -> "OutboundRequest":
        """Built before the privacy class is known: the cache salt, which derives from it, is set by
        `salt` afterwards (the gateway's own hash, no client text)."""
        body = prepared.body
        client = ClientRequest(
            body.client_fields,
            tool_call_format(prepared.model.chat_template.source),
            body.structured_outputs[0].as_vllm() if body.structured_outputs else None,
        )
        requests = tuple(node_request(prepared, index, "") for index in range(prepared.num_choices))
        return cls(requests, client)

    def salt(self, cache_salt: str) -> None:
        for request in self.requests:
            request.cache_salt = cache_salt

    def size(self) -> int:
        """About how many characters `texts` will return (to decide where to scan them)."""
        return 2 * sum(request.ByteSize() for request in self.requests)

    def texts(self, decode) -> list[str]:
        """Every string that would leave, token ids decoded (gateway/privacy/outbound.py), but the
        request ids: the gateway's own random digits, no client text."""
        generated = {request.request_id for request in self.requests}
        client = [self.client.fields, self.client.structured_outputs]
        return outbound_texts(self.requests, client, decode, generated)

    def payload(self) -> bytes:
        """The bytes that would leave, for the privacy ledger's keyed hash (never stored)."""
        parts = [request.SerializeToString(deterministic=True) for request in self.requests]
        client = [self.client.fields, self.client.structured_outputs]
        fields = orjson.dumps(client, option=orjson.OPT_SORT_KEYS)
        return b"\x00".join([*parts, fields])

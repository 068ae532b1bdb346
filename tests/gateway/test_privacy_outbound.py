"""The privacy decision reads exactly what would leave: every string field of the outbound
protobuf messages (found by their descriptors, so a new field cannot be forgotten), token ids
decoded, the client fields an upstream takes as sent, and JSON and escapes inside them."""

import orjson
import pytest
from google.protobuf.descriptor import FieldDescriptor

from formats.ggml_types import GGMLType
from gateway.core.served_model import ServedModel
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_completions import parse_completion
from gateway.dispatch.outbound_messages import OutboundRequest
from gateway.privacy import PrivacyMode, classify
from gateway.privacy.outbound import INTEGER_TYPES, outbound_texts
from gateway.prompt.structured_output_fields import compiled_grammar
from gateway.request.prepared_request import PreparedRequest, prepare
from gateway.request.sender_context import RequestContext
from gateway.tools.tool_request import tool_constraint
from shared.proto import inference_pb2 as pb
from tests.fixtures.tiny_models import config_for, write_tiny_model

TEXT_FREE = frozenset(  # field types that cannot carry text
    {
        FieldDescriptor.TYPE_FLOAT,
        FieldDescriptor.TYPE_DOUBLE,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    }
)
PHONE = "13812345678"


def _fill(message, markers: list[str], path: str = "") -> None:
    """Set every field of `message` (recursively) that can carry text to a value of its own, and
    note what the walk must return for it."""
    for field in message.DESCRIPTOR.fields:
        name = f"{path}{field.name}"
        entry = field.message_type if field.type == FieldDescriptor.TYPE_MESSAGE else None
        if entry is not None and entry.GetOptions().map_entry:
            key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
            mapping = getattr(message, field.name)
            key_value = 7 if key.type in INTEGER_TYPES else f"{name}-key"
            if value.type == FieldDescriptor.TYPE_STRING:
                mapping[key_value] = f"{name}-value"
                markers.append(f"{name}-value")
            else:
                assert value.type in TEXT_FREE, f"{name}: a map value type the walk does not read"
                mapping[key_value] = 1
            markers.append("ids[7]" if key.type in INTEGER_TYPES else f"{name}-key")
        elif entry is not None:
            _fill(
                getattr(message, field.name).add() if field.is_repeated else getattr(message, field.name),
                markers,
                f"{name}.",
            )
        elif field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
            value = name.encode() if field.type == FieldDescriptor.TYPE_BYTES else name
            getattr(message, field.name).append(value) if field.is_repeated else setattr(
                message, field.name, value
            )
            markers.append(name)
        elif field.type in INTEGER_TYPES and field.is_repeated:
            getattr(message, field.name).extend([3, 5])
            markers.append("ids[3, 5]")
        else:
            assert field.type in TEXT_FREE | INTEGER_TYPES, f"{name}: a field type the walk does not read"


def test_every_field_of_the_outbound_message_is_scanned():
    """GenerateRequest is what leaves for a node, the cloud queue or an upstream (whose body is
    built from it and the client fields)."""
    message, markers = pb.GenerateRequest(), []
    _fill(message, markers)
    texts = outbound_texts([message], [], lambda ids: f"ids{ids}")
    assert markers and set(markers) <= set(texts), set(markers) - set(texts)


def test_json_and_escaped_strings_are_read_as_their_text():
    grammar = '{"grammars": [{"lark_grammar": "start: \\"J\\\\u00e4ne 138\\\\-1234\\\\-5678\\""}]}'
    message = pb.GenerateRequest(sampling=pb.SamplingParams(structured_output=grammar))
    texts = outbound_texts([message], [{"tools": [{"arguments": '{"mail": "a@b.example"}'}]}], str)
    assert 'start: "Jäne 138\\-1234\\-5678"' in texts and 'start: "J\\u00e4ne 138-1234-5678"' in texts
    assert "a@b.example" in texts


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = tmp_path_factory.mktemp("outbound") / "tiny-2k.gguf"
    write_tiny_model(path, GGMLType.F32, config_for(GGMLType.F32, context_length=2048))
    return ServedModel.load("tiny", path)


async def _prepared(
    served: ServedModel, body: dict, chat: bool = True, request_id: str = "r"
) -> PreparedRequest:
    raw = orjson.dumps({"model": "tiny", **body})
    parsed = parse_chat(raw) if chat else parse_completion(raw)
    prompts, max_tokens = prepare(served, parsed)
    grammar = await compiled_grammar(served, parsed.structured_outputs or tool_constraint(served, parsed))
    return PreparedRequest(
        request_id, served, parsed, prompts, max_tokens, RequestContext(PrivacyMode.AUTO), None, grammar
    )


SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}}
MESSAGES = [{"role": "user", "content": "Fill in the form."}]
OUTSIDE_THE_MESSAGES = {  # PII only in a field other than the messages' text
    "schema description": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "f", "schema": {**SCHEMA, "description": f"call {PHONE}"}},
        }
    },
    "schema enum": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "f", "schema": {"type": "string", "enum": ["a", f"tel {PHONE}"]}},
        }
    },
    "regex literal": {"structured_outputs": {"regex": "Card: 4539\\.1488\\.0343\\.6467"}},
    "choice": {"structured_outputs": {"choice": ["no", "jane.doe@example.com"]}},
    "guided_choice": {"guided_choice": ["no", f"手机 {PHONE}"]},
    "tool description": {
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "description": f"Ring {PHONE}", "parameters": SCHEMA},
            }
        ]
    },
    "tool call arguments": {
        "messages": [
            *MESSAGES,
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": f'{{"x": "{PHONE}"}}'}}
            ]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ]
    },
    "system prompt": {"messages": [{"role": "system", "content": f"Reach the user on {PHONE}."}, *MESSAGES]},
}  # fmt: skip


@pytest.mark.parametrize("fields", OUTSIDE_THE_MESSAGES.values(), ids=OUTSIDE_THE_MESSAGES.keys())
async def test_personal_data_in_any_outbound_field_makes_the_request_private(served, fields):
    prepared = await _prepared(served, {"messages": MESSAGES, **fields})
    outbound = OutboundRequest.of(prepared)
    decision = classify(lambda: outbound.texts(served.tokenizer.decode), PrivacyMode.AUTO, None)
    assert decision.is_private and decision.reason == "detected", decision
    clean = await _prepared(served, {"messages": MESSAGES})
    outbound = OutboundRequest.of(clean)
    assert not classify(lambda: outbound.texts(served.tokenizer.decode), PrivacyMode.AUTO, None).is_private


async def test_a_prompt_given_as_token_ids_is_read_decoded(served):
    ids = served.tokenizer.encode(f"my number is {PHONE}", add_special=False, parse_special=False)
    prepared = await _prepared(served, {"prompt": ids, "max_tokens": 2}, chat=False)
    outbound = OutboundRequest.of(prepared)
    assert classify(lambda: outbound.texts(served.tokenizer.decode), PrivacyMode.AUTO, None).is_private


async def test_the_gateways_own_request_id_is_not_read_as_personal_data(served):
    """One random id in ~300 holds a Luhn-valid card number (here 4539 1488 0343 6467): the
    gateway's own ids are not scanned, or clean requests would turn private at random; the same
    digits in the client's text still are."""
    card_like = "4539148803436467abcdef0123456789"
    prepared = await _prepared(served, {"messages": MESSAGES}, request_id=card_like)
    outbound = OutboundRequest.of(prepared)
    assert outbound.requests[0].request_id.startswith(card_like)
    decision = classify(lambda: outbound.texts(served.tokenizer.decode), PrivacyMode.AUTO, None)
    assert decision == classify(["Fill in the form."], PrivacyMode.AUTO, None) and not decision.is_private
    assert classify([outbound.requests[0].request_id], PrivacyMode.AUTO, None).is_private  # read alone
    leaked = await _prepared(
        served, {"messages": [{"role": "user", "content": card_like}]}, request_id=card_like
    )
    outbound = OutboundRequest.of(leaked)
    assert classify(lambda: outbound.texts(served.tokenizer.decode), PrivacyMode.AUTO, None).is_private

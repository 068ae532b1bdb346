"""Personal-data recognizers: real identifiers are found, look-alikes with bad check digits are not."""

from unittest import mock

import pytest

from gateway.privacy import PrivacyMode, classify, find_personal_data

FOUND = [
    ("card_number", "my card is 4111 1111 1111 1111, thanks"),
    ("card_number", "pay with 5500-0000-0000-0004"),
    ("iban", "send it to DE89 3704 0044 0532 0130 00 please"),
    ("iban", "IBAN GB82WEST12345698765432"),
    ("es_dni", "DNI 12345678Z"),
    ("es_dni", "NIE X1234567L"),
    ("nl_bsn", "BSN 111222333"),
    ("se_personnummer", "personnummer 811218-9876"),
    ("fi_hetu", "HETU 131052-308T"),
    ("cn_resident_id", "ID 11010519491231002X"),
    ("us_ssn", "SSN 123-45-6789"),
    ("email", "write to jane.doe@example.co.uk"),
    ("phone", "call me at +44 20 7946 0958"),
    ("ip_address", "the server is 192.168.10.7"),
    ("ip_address", "or 2001:db8::8a2e:370:7334"),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE..."),
    ("aws_access_key", "key AKIAIOSFODNN7EXAMPLE"),
    ("github_token", "token ghp_" + "a" * 36),
    ("api_key", "use sk-proj-" + "A1b2" * 8),
    (
        "jwt",
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("credential", "password: hunter2!"),
]

NOT_FOUND = [
    "card-like 4111 1111 1111 1112 (bad Luhn)",
    "IBAN-like DE89 3704 0044 0532 0130 01 (bad mod 97)",
    "DNI-like 12345678A (wrong letter)",
    "BSN-like 111222334",
    "HETU-like 131052-308A",
    "SSN-like 000-12-3456",
    "version 1.2.3 and 999.1.1.1",
    "the year 2024 had 365 days and 12 months",
    "What is the capital of France?",
]


@pytest.mark.parametrize(("kind", "text"), FOUND)
def test_real_identifiers_are_found(kind, text):
    assert kind in {finding.kind for finding in find_personal_data(text)}


@pytest.mark.parametrize("text", NOT_FOUND)
def test_look_alikes_are_not(text):
    assert find_personal_data(text) == []


def test_modes_and_header():
    assert classify(["hello"], PrivacyMode.ALWAYS_PRIVATE, None).reason == "key"
    assert classify(["hello"], PrivacyMode.PUBLIC, "private").reason == "header"
    assert classify(["jane@example.com"], PrivacyMode.PUBLIC, None).is_private is False
    decision = classify(["hello", "jane@example.com and 4111111111111111"], PrivacyMode.AUTO, None)
    assert decision.is_private and decision.kinds == ("card_number", "email")
    assert classify(["hello"], PrivacyMode.AUTO, None) == classify(["hello"], PrivacyMode.AUTO, "public")


def test_a_detector_error_fails_closed():
    with mock.patch("gateway.privacy.find_personal_data", side_effect=RuntimeError("boom")):
        decision = classify(["hello"], PrivacyMode.AUTO, None)
    assert decision.is_private and decision.reason == "detector_error"


@pytest.mark.parametrize(
    "text", ["call 555-123-4567", "ring 020 7946 0958", "+1 (415) 555-2671", "+33612345678"]
)
def test_phone_formats(text):
    assert [f.kind for f in find_personal_data(text)] == ["phone"]

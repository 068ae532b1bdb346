"""Personal-data recognizers: real identifiers are found, look-alikes with bad check digits are not."""

import random
from unittest import mock

import pytest

from gateway.privacy import PrivacyMode, classify, find_personal_data
from gateway.privacy.recognizers import find_personal_data_ungated

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
    ("ip_address", "the client is 81.2.69.160"),
    ("ip_address", "or 2a00:1450:4001:82b::200e"),
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
    "the server is 192.168.10.7, the gateway 10.0.0.1, loopback 127.0.0.1 and ::1",
    "docs use 2001:db8::8a2e:370:7334 and 203.0.113.9; link-local fe80::1 and 169.254.1.1",
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


def test_a_stage_that_cannot_load_makes_auto_requests_private(monkeypatch):
    """Faker's name lists missing: the free-text stage is off, reported as such, and every auto
    request is private until it runs again; public keys are unaffected."""
    from gateway.privacy import names, stages

    def missing():
        raise ModuleNotFoundError("No module named 'faker'")

    monkeypatch.setattr(stages, "gazetteers", missing)
    stages.stage_status.cache_clear()
    try:
        assert stages.stage_status()["free_text"].startswith("off: ModuleNotFoundError")
        assert classify(["hello"], PrivacyMode.AUTO, None).reason == "detector_off"
        assert classify(["hello"], PrivacyMode.PUBLIC, None).is_private is False
    finally:
        monkeypatch.setattr(stages, "gazetteers", names.gazetteers)
        stages.stage_status.cache_clear()
    assert stages.stage_status() == {"patterns": "ok", "free_text": "ok"}
    assert classify(["hello"], PrivacyMode.AUTO, None).reason == "clean"


async def test_a_scan_past_its_time_makes_the_request_private(monkeypatch):
    import time as clock

    import gateway.privacy as privacy

    monkeypatch.setattr(privacy, "SCAN_TIMEOUT_S", 0.05)
    monkeypatch.setattr(privacy, "find_personal_data", lambda text: clock.sleep(0.5) or [])
    decision = await privacy.classify_async(["x" * 20_000], PrivacyMode.AUTO, None)
    assert decision.is_private and decision.reason == "detector_timeout"


@pytest.mark.parametrize(
    "text", ["call 555-123-4567", "ring 020 7946 0958", "+1 (415) 555-2671", "+33612345678"]
)
def test_phone_formats(text):
    assert [f.kind for f in find_personal_data(text)] == ["phone"]


def _near_misses(rng: random.Random) -> list[str]:
    """Texts around the gates' thresholds: numbers of 1-20 digits (ASCII and Arabic-Indic) with
    the separators the patterns allow, embedded in prose; the secrets' keywords in other cases
    and in the letters a case-insensitive pattern also matches (long s, dotless and dotted I,
    Kelvin sign); the identifiers above with a character changed, dropped or repeated."""
    texts = []
    for _ in range(3000):
        digits = (
            "0123456789"
            if rng.random() < 0.8
            else "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"
        )
        number = ""
        for _ in range(rng.randint(1, 20)):
            number += rng.choice(digits) + (
                "" if rng.random() < 0.6 else rng.choice([" ", "-", ".", "(", ") ", "+"])
            )
        prefix = rng.choice(["", "+", "X", "DE", "GB82", "call ", "ID "])
        suffix = rng.choice(["", "Z", "X", "T", "-308T", ".7", " thanks"])
        texts.append(f"text {prefix}{number.strip()}{suffix} more")
    keywords = ["password", "passwd", "pwd", "secret", "api_key", "apikey", "access-token"]
    letters = {
        "s": ["S", "\u017f"],
        "i": ["I", "\u0131", "\u0130"],
        "k": ["K", "\u212a"],
        "a": ["A"],
        "p": ["P"],
    }
    for keyword in keywords:
        for _ in range(30):
            spelled = "".join(rng.choice([c, *letters.get(c, [c.upper()])]) for c in keyword)
            texts.append(f"my {spelled}{rng.choice([': ', '=', ' = '])}hunter22")
    for _, text in FOUND:
        for _ in range(40):
            at = rng.randrange(len(text))
            edit = rng.choice(["change", "drop", "repeat"])
            if edit == "change":
                texts.append(text[:at] + rng.choice("0123456789 -.:Xab@_") + text[at + 1 :])
            elif edit == "drop":
                texts.append(text[:at] + text[at + 1 :])
            else:
                texts.append(text[:at] + text[at] * 3 + text[at:])
    return texts


def _iban_with_check_digits(country: str, bban: str) -> str:
    """An IBAN that passes mod 97 (ISO 13616: 98 minus the remainder of BBAN + country + 00)."""
    number = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(number) % 97:02d}{bban}"


THRESHOLDS = [  # each at a gate's threshold exactly: a stricter gate would lose it
    "tel 0301234",  # a phone's seven digits, no separator
    "host 1.2.3.4 is up",  # the shortest IPv4 address
    f"pay {_iban_with_check_digits('GB', 'WEST1A2B3C4D5E6F7G')} today",  # no more than 2 digits in a row
    "SSN 123-45-6789",
]


def test_the_gates_never_change_what_is_found():
    texts = [text for _, text in FOUND] + NOT_FOUND + THRESHOLDS + _near_misses(random.Random(7))
    assert all(find_personal_data_ungated(text) for text in THRESHOLDS)
    found = 0
    for text in texts:
        expected = find_personal_data_ungated(text)
        assert find_personal_data(text) == expected, text
        found += bool(expected)
    assert found > 500  # the corpus reaches the gates' thresholds from both sides

"""Recognizers of personal data and secrets: a pattern finds candidates, a validator (check digit,
range, parse) keeps only real ones, so "order 4111 1111 1111 1111" is a card and "1234 5678 9012
3456" is not."""

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.privacy import checksums


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Recognizer:
    kind: str
    pattern: re.Pattern
    validate: Callable[[re.Match], bool] = lambda match: True


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _card(match: re.Match) -> bool:
    digits = _digits(match.group())
    return 13 <= len(digits) <= 19 and digits[0] in "2345636" and checksums.luhn_valid(digits)


def _ip(match: re.Match) -> bool:
    try:
        address = ipaddress.ip_address(match.group())
    except ValueError:
        return False
    return not address.is_unspecified


def _phone(match: re.Match) -> bool:
    return 9 <= len(_digits(match.group())) <= 15


def _swedish(match: re.Match) -> bool:
    return checksums.luhn_valid(_digits(match.group())[-10:])


RECOGNIZERS = [
    Recognizer("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")),
    Recognizer("card_number", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), _card),
    Recognizer(
        "iban",
        re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"),
        lambda m: checksums.iban_valid(m.group().replace(" ", "")),
    ),
    Recognizer(
        "es_dni", re.compile(r"\b[XYZ]?\d{7,8}[A-Za-z]\b"), lambda m: checksums.spanish_dni_valid(m.group())
    ),
    Recognizer("nl_bsn", re.compile(r"\b\d{9}\b"), lambda m: checksums.dutch_bsn_valid(m.group())),
    Recognizer("se_personnummer", re.compile(r"\b(?:\d{2})?\d{6}[-+]?\d{4}\b"), _swedish),
    Recognizer(
        "fi_hetu",
        re.compile(r"\b\d{6}[-+A]\d{3}[0-9A-Za-z]\b"),
        lambda m: checksums.finnish_hetu_valid(m.group()),
    ),
    Recognizer(
        "cn_resident_id",
        re.compile(r"\b\d{17}[\dXx]\b"),
        lambda m: checksums.chinese_resident_id_valid(m.group()),
    ),
    Recognizer(
        "us_ssn",
        re.compile(r"\b(\d{3})-(\d{2})-(\d{4})\b"),
        lambda m: checksums.us_ssn_plausible(m.group(1), m.group(2), m.group(3)),
    ),
    Recognizer("ip_address", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[0-9A-Fa-f:]*:[0-9A-Fa-f:]+\b"), _ip),
    Recognizer(
        "phone",
        re.compile(
            r"(?<!\w)(?<!\d[ .-])(?:\+\d{1,3}[ .-]?(?:\(?\d{1,4}\)?[ .-]?){1,4}\d{2,4}"  # +CC ...
            r"|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}"  # North American 555-123-4567
            r"|0\d{1,4}[ .-]\d{3,4}[ .-]\d{3,4})(?!\w)(?![ .-]\d)"  # national: 020 7946 0958
        ),
        _phone,
    ),
    Recognizer("private_key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    Recognizer("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    Recognizer("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    Recognizer("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    Recognizer("api_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b")),
    Recognizer("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    Recognizer(
        "credential",
        re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token)\b\s*[:=]\s*\S{4,}"),
    ),
]


def find_personal_data(text: str) -> list[Finding]:
    findings = []
    for recognizer in RECOGNIZERS:
        for match in recognizer.pattern.finditer(text):
            if recognizer.validate(match):
                findings.append(Finding(recognizer.kind, match.start(), match.end()))
    return findings

"""Recognizers of personal data and secrets: a pattern finds candidates, a validator (check digit,
range, parse) keeps only real ones, so "order 4111 1111 1111 1111" is a card and "1234 5678 9012
3456" is not.

Each pattern is a pass over the whole text in Python's regex engine (~20 ns per character), so
before it a gate asks what any of its matches needs: digits in a row or in one separated number
(two shared passes give the longest of each), or a literal that C string search finds. A gate is
a necessary condition only, never a heuristic: what the patterns and validators would find, they
still find (tests/gateway/test_privacy.py compares them on thousands of texts at the thresholds).
Prose then costs a few passes instead of eighteen (benchmarks/privacy_scan.py)."""

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


class TextFacts:
    """What the gates ask of one text, each computed once and only when first asked."""

    __slots__ = ("_cluster", "_folded", "_run", "text")

    def __init__(self, text: str):
        self.text = text
        self._run: int | None = None
        self._cluster: int | None = None
        self._folded: str | None = None

    @property
    def longest_run(self) -> int:
        """The most decimal digits in a row (`\\d`: any Unicode decimal digit, as in the patterns)."""
        if self._run is None:
            self._run = max(map(len, _DIGIT_RUNS.findall(self.text)), default=0)
        return self._run

    @property
    def longest_cluster(self) -> int:
        """The length of the longest stretch of digits joined by at most three of the separators
        the numeric patterns allow between digits; any number they match has all its digits in
        one such stretch, so it is at least as long as that number has digits."""
        if self._cluster is None:
            self._cluster = max(map(len, _DIGIT_CLUSTERS.findall(self.text)), default=0)
        return self._cluster

    @property
    def folded(self) -> str:
        """The text as a case-insensitive pattern sees it: casefolded (long s is s, Kelvin sign is
        k), and dotless i as i (the one other letter `(?i)i` matches; dotted capital I folds to i
        plus a combining dot)."""
        if self._folded is None:
            self._folded = self.text.casefold().replace("\u0131", "i")
        return self._folded


_DIGIT_RUNS = re.compile(r"\d+")
_DIGIT_CLUSTERS = re.compile(r"\d(?:[ ().+-]{0,3}\d)*")


def digits(run: int = 0, cluster: int = 0) -> Callable[[TextFacts], bool]:
    """Needs `run` digits in a row and a digit cluster at least `cluster` long."""
    return lambda facts: facts.longest_run >= run and facts.longest_cluster >= cluster


def contains(*literals: str) -> Callable[[TextFacts], bool]:
    return lambda facts: any(literal in facts.text for literal in literals)


def folded_contains(*literals: str) -> Callable[[TextFacts], bool]:
    return lambda facts: any(literal in facts.folded for literal in literals)


@dataclass(frozen=True, slots=True)
class Recognizer:
    kind: str
    pattern: re.Pattern
    validate: Callable[[re.Match], bool] = lambda match: True
    gate: Callable[[TextFacts], bool] = lambda facts: True  # False: no match can be valid here


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
    Recognizer(
        "email",
        re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
        gate=contains("@"),
    ),
    Recognizer(
        "card_number", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), _card, digits(cluster=13)
    ),
    Recognizer(
        "iban",
        re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"),
        lambda m: checksums.iban_valid(m.group().replace(" ", "")),
        digits(run=2),
    ),
    Recognizer(
        "es_dni",
        re.compile(r"\b[XYZ]?\d{7,8}[A-Za-z]\b"),
        lambda m: checksums.spanish_dni_valid(m.group()),
        digits(run=7),
    ),
    Recognizer(
        "nl_bsn", re.compile(r"\b\d{9}\b"), lambda m: checksums.dutch_bsn_valid(m.group()), digits(run=9)
    ),
    Recognizer(
        "se_personnummer", re.compile(r"\b(?:\d{2})?\d{6}[-+]?\d{4}\b"), _swedish, digits(run=6, cluster=10)
    ),
    Recognizer(
        "fi_hetu",
        re.compile(r"\b\d{6}[-+A]\d{3}[0-9A-Za-z]\b"),
        lambda m: checksums.finnish_hetu_valid(m.group()),
        digits(run=6),
    ),
    Recognizer(
        "cn_resident_id",
        re.compile(r"\b\d{17}[\dXx]\b"),
        lambda m: checksums.chinese_resident_id_valid(m.group()),
        digits(run=17),
    ),
    Recognizer(
        "us_ssn",
        re.compile(r"\b(\d{3})-(\d{2})-(\d{4})\b"),
        lambda m: checksums.us_ssn_plausible(m.group(1), m.group(2), m.group(3)),
        digits(run=4, cluster=11),
    ),
    Recognizer(
        "ip_address",
        re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[0-9A-Fa-f:]*:[0-9A-Fa-f:]+\b"),
        _ip,
        lambda facts: ":" in facts.text or facts.longest_cluster >= 7,  # v6 | v4 (1.2.3.4)
    ),
    Recognizer(
        "phone",
        re.compile(
            r"(?<!\w)(?<!\d[ .-])(?:\+\d{1,3}[ .-]?(?:\(?\d{1,4}\)?[ .-]?){1,4}\d{2,4}"  # +CC ...
            r"|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}"  # North American 555-123-4567
            r"|0\d{1,4}[ .-]\d{3,4}[ .-]\d{3,4})(?!\w)(?![ .-]\d)"  # national: 020 7946 0958
        ),
        _phone,
        digits(cluster=9),  # the 9 digits _phone requires
    ),
    Recognizer(
        "private_key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"), gate=contains("-----BEGIN ")
    ),
    Recognizer("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), gate=contains("AKIA", "ASIA")),
    Recognizer(
        "github_token",
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
        gate=contains("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    Recognizer("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), gate=contains("xox")),
    Recognizer("api_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b"), gate=contains("sk-")),
    Recognizer(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),
        gate=contains("eyJ"),
    ),
    Recognizer(
        "credential",
        re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token)\b\s*[:=]\s*\S{4,}"),
        gate=folded_contains("pass", "pwd", "secret", "api", "access"),
    ),
]


def find_personal_data(text: str) -> list[Finding]:
    facts = TextFacts(text)
    return [
        finding for recognizer in RECOGNIZERS if recognizer.gate(facts) for finding in _scan(recognizer, text)
    ]


def find_personal_data_ungated(text: str) -> list[Finding]:
    """Every pattern over the whole text, no gates: what find_personal_data must equal (the
    reference of its tests and of benchmarks/privacy_scan.py)."""
    return [finding for recognizer in RECOGNIZERS for finding in _scan(recognizer, text)]


def _scan(recognizer: Recognizer, text: str) -> list[Finding]:
    return [
        Finding(recognizer.kind, match.start(), match.end())
        for match in recognizer.pattern.finditer(text)
        if recognizer.validate(match)
    ]

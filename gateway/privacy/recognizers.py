"""Recognizers of personal data and secrets: a pattern finds candidates, a validator (check digit,
range, parse, context) keeps only real ones, so "order 4111 1111 1111 1111" is a card and "1234
5678 9012 3456" is not.

Each view of the text is scanned (gateway/privacy/normalize.py: NFKC, every script's digits,
invisible characters out, escapes, split digit groups, spelled-out digits, `at`/`dot`), so
"４５３９​1488...", "٤٥٣٩ ١٤٨٨ ..." and "4539 1488 then 0343 6467" are the card they spell.
Phones are in gateway/privacy/phones.py, identifiers validated by python-stdnum in
gateway/privacy/identifiers.py.

Every pattern runs in linear time: a match can only start where its first character class does
not continue from the left (a lookbehind), and its repetitions are bounded or possessive, so no
input makes the engine retry a long run from every position ("@ " + "-" * 100000 took 10 s
before). Each pattern is still a pass over the whole text, so a gate (gateway/privacy/
text_facts.py) first asks what any of its matches needs; prose then costs a few passes.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

import gateway.privacy.accounts as accounts
import gateway.privacy.documents as documents
import gateway.privacy.identifiers as identifiers
import gateway.privacy.labelled_ids as labelled_ids
import gateway.privacy.phones as phones
import gateway.privacy.secrets as secrets
import gateway.privacy.validators as v
from gateway.privacy.examples import is_published_example
from gateway.privacy.free_text import free_text_findings
from gateway.privacy.normalize import normalize, views
from gateway.privacy.person_ids import person_id_findings
from gateway.privacy.tables import table_findings
from gateway.privacy.text_facts import Gate, TextFacts, alnum, both, contains, digits, folded_contains
from gateway.privacy.thing_labels import follows_thing_label


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int  # in the normalized text
    end: int


@dataclass(frozen=True, slots=True)
class Recognizer:
    kind: str
    pattern: re.Pattern
    validate: Callable[[re.Match], bool] = lambda match: True
    gate: Gate = lambda facts: True  # False: no match can be valid here


NATIONAL_IDS = [
    Recognizer(
        "iban",  # any case: [A-Za-z] rather than (?i), which costs every position a case fold
        re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}[ ]?\d{2}(?:(?:[ -]|[ ]?\r?\n)?[A-Za-z0-9]){11,32}"),
        v.iban,
        both(digits(run=2), alnum(4)),
    ),
    Recognizer(
        "es_dni",
        re.compile(r"\b[XYZ]?\d{7,8}[A-Za-z]\b"),
        v.spanish_dni,
        digits(run=7),
    ),
    Recognizer(
        "nl_bsn",
        re.compile(  # (?=\d): a digit first, which the engine checks before the lookbehind
            r"(?=\d)(?<![\d.])(?:\d{4}\.\d{2}\.\d{3}|\d{3}[ .-]\d{3}[ .-]\d{3}|\d{9})(?![\d.]|[ -]\d)"
        ),
        v.dutch_bsn,
        digits(run=3, cluster=9),
    ),
    Recognizer(
        "se_personnummer",
        re.compile(r"\b(?:\d{2})?\d{6}[-+]?\d{4}\b"),
        v.swedish_personnummer,
        digits(run=6, cluster=10),
    ),
    Recognizer(
        "fi_hetu",
        re.compile(r"\b\d{6}[-+A]\d{3}[0-9A-Za-z]\b"),
        v.finnish_hetu,
        digits(run=6),
    ),
    Recognizer(
        "cn_resident_id",
        re.compile(r"(?<!\d)(?<!\d )\d{6} ?\d{8} ?\d{3}[\dXx](?![\dXx])"),
        v.chinese_resident_id,
        digits(run=3, cluster=17),  # the 17 digits before the check character
    ),
    Recognizer(
        "us_ssn",
        re.compile(
            r"(?<![\d-])(?P<ssn>\d{3}([- ])\d{2}\2\d{4})(?![\d-])"
            r"|(?i:\b(?:ssn|social security(?: number)?|soc\. ?sec\.?)\b)\D{0,20}?(?P<bare>\d{9})(?!\d)"
        ),
        v.us_ssn,
        digits(run=2, cluster=9),
    ),
    Recognizer(
        "in_aadhaar",
        re.compile(r"(?<![\d-])(?<!\d[ -])[2-9]\d{3}([ -]?)\d{4}\1\d{4}(?![\d-]|[ ]\d)"),
        v.aadhaar,
        digits(run=4, cluster=12),
    ),
    Recognizer(
        "de_tax_id",
        re.compile(r"(?<!\d)(?<!\d )\d{2} ?\d{3} ?\d{3} ?\d{3}(?!\d|[ ]\d)"),
        v.german_tax_id,
        digits(run=2, cluster=11),
    ),
    Recognizer(
        "de_id_card",
        re.compile(r"\b[CFGHJ-NPRTV-Zcfghj-nprtv-z][CFGHJ-NPRTV-Zcfghj-nprtv-z0-9]{8}\d\b"),
        v.german_id_card,
        both(digits(run=1), alnum(10)),
    ),
    Recognizer(
        "uk_nino",
        re.compile(
            r"\b(?![BbGg][BbGg]|[Kk][Nn]|[Nn][KkTt]|[Tt][Nn]|[Zz][Zz])"
            r"[A-CEGHJ-PR-TW-Za-ceghj-pr-tw-z][A-CEGHJ-NPR-TW-Za-ceghj-npr-tw-z]"
            r" ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d]\b"
        ),
        gate=digits(run=2, cluster=6),
    ),
    Recognizer(
        "it_fiscal_code",
        re.compile(r"\b[A-Za-z]{6}\d{2}[ABCDEHLMPRSTabcdehlmprst]\d{2}[A-Za-z]\d{3}[A-Za-z]\b"),
        v.italian_fiscal_code,
        both(digits(run=3), alnum(16)),
    ),
]

CONTACT = [
    Recognizer(
        "email",
        re.compile(r"(?<![\w.%+-])[\w.%+-]{1,64}+@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}(?![\w-])"),
        v.email,
        gate=contains("@"),
    ),
    Recognizer(
        "card_number",
        re.compile(r"(?<![\d./-])(?<!\d[ ./-])\d(?:[ ./-]?\d){11,18}(?![\d]|[ ./-]\d)"),
        v.card,
        digits(cluster=12),
    ),
    Recognizer(
        "ip_address",
        re.compile(
            r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)"
            r"|(?<![0-9A-Fa-f:])(?=[0-9A-Fa-f]{1,4}:|::)[0-9A-Fa-f:]{2,39}+(?![0-9A-Fa-f:])"
        ),
        v.ip_address,
        lambda facts: ":" in facts.text or facts.longest_cluster >= 7,  # v6 | v4 (1.2.3.4)
    ),
    Recognizer("phone", phones.CANDIDATE, phones.is_phone, digits(cluster=7)),
]

SECRETS = [
    Recognizer(
        "private_key",
        re.compile(r"(?:-----)?BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?|PuTTY-User-Key-File-\d"),
        gate=contains("BEGIN ", "PuTTY-"),
    ),
    Recognizer("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), gate=contains("AKIA", "ASIA")),
    Recognizer(
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}+|github_pat_[A-Za-z0-9_]{22,255}+)(?!\w)"),
        gate=contains("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Recognizer(
        "slack_token",
        re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,250}+(?![\w-])"),
        gate=contains("xox"),
    ),
    Recognizer(
        "api_key",
        re.compile(
            r"(?<![\w-])(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,250}+"
            r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}+"  # Stripe
            r"|AIza[0-9A-Za-z_-]{35})(?![\w-])"  # Google
        ),
        gate=contains("sk-", "k_live_", "k_test_", "AIza"),
    ),
    Recognizer(
        "jwt",
        re.compile(r"(?<![\w-])eyJ[\w-]{8,}+\.eyJ[\w-]{8,}+\.[\w-]{8,}+"),
        gate=contains("eyJ"),
    ),
    *(
        Recognizer("cloud_key", re.compile(pattern), gate=contains(*literals))
        for pattern, literals in secrets.SERVICE_KEYS
    ),
    Recognizer("credential", secrets.ASSIGNMENT, secrets.assignment, contains(":", "=")),
    Recognizer("credential", secrets.KEYWORD, secrets.keyword, folded_contains(*secrets.KEYWORD_LITERALS)),
    Recognizer("credential", secrets.URL_USERINFO, secrets.url_userinfo, contains("://")),
    Recognizer("credential", secrets.SAID, secrets.said, folded_contains(*secrets.SAID_LITERALS)),
]

IDENTIFIER_GATES = {
    "kr_rrn": digits(run=6, cluster=13),
    "jp_my_number": digits(run=4, cluster=12),
    "br_cpf": digits(run=2, cluster=11),
    "br_cnpj": digits(run=2, cluster=14),
    "fr_nir": digits(run=2),
    "mac_address": alnum(2),
    "passport": both(digits(run=8), folded_contains(*identifiers.PASSPORT_LITERALS)),
    "medical_record_number": both(digits(run=4), folded_contains(*identifiers.MEDICAL_RECORD_LITERALS)),
}
IDENTIFIERS = [
    Recognizer(kind, pattern, validate, IDENTIFIER_GATES[kind])
    for kind, pattern, validate in identifiers.PATTERNS
]
DOCUMENTS = [  # passports, MRZ lines, plates, bank accounts: each after its words (literals gate)
    Recognizer(kind, pattern, validate, folded_contains(*literals))
    for kind, pattern, validate, literals in (*documents.PATTERNS, *accounts.PATTERNS, *labelled_ids.PATTERNS)
    if pattern is not labelled_ids.LABELLED_ID
]
_ID_WORD_GATES = (
    contains(*labelled_ids.ID_ABBREVIATION_LITERALS),
    folded_contains(*labelled_ids.ID_WORD_LITERALS),
)
LABELLED_IDS = Recognizer(  # an identifier word as written (SSN) or casefolded ("social security")
    "labelled_id",
    labelled_ids.LABELLED_ID,
    labelled_ids.labelled_id,
    both(digits(run=1), lambda facts: any(gate(facts) for gate in _ID_WORD_GATES)),
)
RECOGNIZERS = [*CONTACT, *NATIONAL_IDS, *IDENTIFIERS, *DOCUMENTS, LABELLED_IDS, *SECRETS]
PERSON_ID_GATE = digits(run=2, cluster=4)
TABLE_GATE = both(digits(run=1), contains("\n"))  # the catalogue's numbers: four digits at least


# Joined digit groups are read for numbers with check digits, not for phones: "page 030 and
# 12345" joined looks like one, and a phone split by words is rare (spelled digits are read).
NOT_IN_VIEW = {"joined": frozenset({"phone", "ip_address", "us_ssn"})}
# Long texts are scanned in chunks, overlapping by more than any match is long (but a PEM
# header's), so that no regex call holds the GIL for long: the event loop keeps its turns.
CHUNK_CHARS, CHUNK_OVERLAP = 8192, 512


def find_personal_data(text: str) -> list[Finding]:
    """What every view of the text (gateway/privacy/normalize.py) shows; positions are in the
    view of the chunk."""
    return _find(text, gated=True)


def find_personal_data_ungated(text: str) -> list[Finding]:
    """Every pattern over every view, no gates: what find_personal_data must equal (the
    reference of its tests and of benchmarks/privacy_scan.py)."""
    return _find(text, gated=False)


def _find(text: str, gated: bool) -> list[Finding]:
    found: list[Finding] = []
    for start in range(0, max(1, len(text) - CHUNK_OVERLAP), CHUNK_CHARS - CHUNK_OVERLAP):
        for name, view in views(text[start : start + CHUNK_CHARS]):
            if name == "base":
                found.extend(Finding(*finding) for finding in free_text_findings(view))
            facts, skipped = TextFacts(view), NOT_IN_VIEW.get(name, frozenset())
            if not gated or PERSON_ID_GATE(facts):
                found.extend(
                    Finding(*finding)
                    for finding in person_id_findings(view)
                    if not follows_thing_label(view, finding[1])
                )
            if not gated or TABLE_GATE(facts):  # a header line, then a row of cells
                found.extend(Finding(*finding) for finding in table_findings(view))
            for recognizer in RECOGNIZERS:
                if recognizer.kind not in skipped and (not gated or recognizer.gate(facts)):
                    found.extend(_scan(recognizer, view))
    return list(dict.fromkeys(found))


def _scan(recognizer: Recognizer, text: str) -> list[Finding]:
    """The valid matches, but a number right after a business's or a thing's label ("EIN:") and
    a published example in a text about examples (gateway/privacy/examples.py)."""
    return [
        Finding(recognizer.kind, match.start(), match.end())
        for match in recognizer.pattern.finditer(text)
        if recognizer.validate(match) and not follows_thing_label(text, match.start()) and not _example(match)
    ]


def _example(match: re.Match) -> bool:
    values = (match.group(), *(value for value in match.groupdict().values() if value))
    return any(is_published_example(value, match.string) for value in values)


__all__ = ["RECOGNIZERS", "Finding", "both", "find_personal_data", "find_personal_data_ungated", "normalize"]

"""The free-text stage's person references, sensitive details and public cases
(tests/gateway/privacy_person_cases.py), the name index's file, the `strict` mode, and linear
time on hostile texts for the new patterns."""

import gzip
import time

import pytest

from gateway.privacy import PrivacyMode, classify, find_personal_data
from gateway.privacy.name_index import SECTIONS, load_name_index
from gateway.privacy.strict import strict_findings
from tests.gateway.privacy_disclosure_cases import DISCLOSURE_NEAR_MISSES, DISCLOSURE_POSITIVES
from tests.gateway.privacy_occasion_cases import OCCASION_NEAR_MISSES, OCCASION_POSITIVES
from tests.gateway.privacy_person_cases import PERSON_NEAR_MISSES, PERSON_POSITIVES


@pytest.mark.parametrize(
    ("kind", "language", "text"), PERSON_POSITIVES + OCCASION_POSITIVES + DISCLOSURE_POSITIVES
)
def test_person_positive_is_found_as_its_kind(kind, language, text):
    assert kind in {finding.kind for finding in find_personal_data(text)}, (language, text)


@pytest.mark.parametrize(
    ("kind", "language", "text"), PERSON_NEAR_MISSES + OCCASION_NEAR_MISSES + DISCLOSURE_NEAR_MISSES
)
def test_public_case_is_not_private(kind, language, text):
    assert find_personal_data(text) == [], (kind, language, text)


def test_name_index_reads_its_sections(tmp_path):
    path = tmp_path / "names.txt.gz"
    sections = ["callum\nellie", "thistlewood", "grace", "piaf", "metformin", "全国"]
    assert len(sections) == len(SECTIONS)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("\n\f\n".join(sections))
    index = load_name_index(path)
    assert index.first == {"callum", "ellie"} and index.figures == {"piaf"} and index.han_words == {"全国"}
    assert index.is_name("Callum") and not index.is_name("Grace") and index.is_any_name("Grace")


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Jane Doe asked about the weather", ("person_reference",)),
        ("my husband likes fishing, suggest a gift", ("person_reference",)),
        ("order 123456 shipped", ("identifier_shape",)),
        ("quote reference AB12-3456-7890 please", ("identifier_shape",)),
        ("artifact abcd1234efgh5678ijkl", ("identifier_shape",)),
        ("What is the capital of France?", ()),
        ("Explain how Einstein's relativity changed physics", ()),
        ("Template: Dear [Employee Name], your contract ends on [Date].", ()),
    ],
)
def test_strict_keeps_any_person_or_identifier_shape(text, kinds):
    assert strict_findings(text) == kinds
    decision = classify([text], PrivacyMode.STRICT, None)
    assert decision.is_private == bool(kinds)
    assert decision.reason == ("strict" if kinds else "clean")
    assert classify([text], PrivacyMode.AUTO, None).reason == "clean"


HOSTILE = {
    "street then a long word": "ул. " + "а" * 100_000,
    "arabic street": "شارع " + "ب" * 100_000,
    "hindi number then words": "12 " + "क " * 50_000,
    "relation then capitals": "my husband " + "A" * 100_000,
    "role then han": "患者" + "张" * 100_000,
    "many relations": "my son " * 15_000,
    "address words": "1 " + "Oak " * 25_000,
    "address anchors": "send it to 12 " * 10_000,
    "name fields then capitals": "name: " + "Anna " * 20_000,
    "gated windows": "my " * 30_000,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_new_patterns_are_linear(name):
    started = time.perf_counter()
    find_personal_data(HOSTILE[name])
    assert time.perf_counter() - started < 3.0, name

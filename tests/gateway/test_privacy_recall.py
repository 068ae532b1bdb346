"""Privacy measured, not asserted: recall and the over-block rate of the gateway's privacy decision
(`classify` in `auto` mode, as a request's text meets it), in two parts printed apart at the end
of the run, per kind and per language.

- Cases we wrote (the seeded generator's, the hand-written hard cases, the recognizers' own
  corpus): regression tests, held to 99% recall per kind and 2% of near misses flagged.
- Cases from elsewhere (tests/gateway/privacy_thirdparty/: third-party catalogues and generators,
  and the outside corpus): where a kind's recall is believed. Held to a ratchet, what the
  detector achieved when the part was added, rounded a little down (recall) or up (over-block);
  whoever improves the detector raises it. The target (issue 61) is printed beside it.
"""

import functools
from pathlib import Path

import pytest

from gateway.privacy import PrivacyMode, classify
from tests.fixtures.report import report
from tests.gateway.privacy_scoring import Score, ours, row, rows, score
from tests.gateway.privacy_thirdparty import elsewhere_cases, outside_cases, thirdparty_cases

MIN_RECALL_PER_KIND, MAX_FALSE_POSITIVES = 0.99, 0.02  # cases we wrote
TARGET_RECALL, TARGET_OVER_BLOCKED = 0.97, 0.03  # issue 61, on cases from elsewhere
# (min recall, max over-blocked) per part from elsewhere: what the detector reached, a little below
# (a ratchet: raised as it improves, never lowered)
OUTSIDE_2 = Path(__file__).parent / "privacy_outside_2"
RATCHET = {"third-party": (0.92, 0.05), "outside": (0.95, 0.03), "outside-2": (0.90, 0.06)}


@functools.cache  # the parts share no text in practice, but "elsewhere" is their union
def is_private(text: str) -> bool:
    return classify([text], PrivacyMode.AUTO, None).is_private


@pytest.fixture(scope="module")
def elsewhere() -> dict[str, Score]:
    return {
        "third-party": score(thirdparty_cases(), is_private),
        "outside": score(outside_cases(), is_private),
        "outside-2": score(outside_cases(OUTSIDE_2), is_private),  # a second writer's (its README)
    }


def test_cases_we_wrote(request):
    cases = ours()
    assert len(cases) >= 600
    assert len({c.kind for c in cases if c.is_private}) >= 15 and len({c.language for c in cases}) >= 7
    result = score(cases, is_private)
    report(request.config, "privacy: cases we wrote (tests/gateway/test_privacy_recall.py)", rows(result))
    recalls = {kind: tally.recall for kind, tally in result.kind_to_tally.items()}
    low = {
        kind: recall
        for kind, recall in recalls.items()
        if recall is not None and recall < MIN_RECALL_PER_KIND
    }
    assert not low, (low, result.misses)
    assert result.total.over_blocked <= MAX_FALSE_POSITIVES, result.false_alarms


def test_cases_from_elsewhere(request, elsewhere):
    combined = score(elsewhere_cases(), is_private)
    summary = [f"target: recall >= {TARGET_RECALL:.0%}, over-blocked <= {TARGET_OVER_BLOCKED:.0%}"]
    for part, (min_recall, max_blocked) in RATCHET.items():
        ratchet = f"   ratchet >= {min_recall:.0%}, <= {max_blocked:.0%}"
        summary.append(row(part, elsewhere[part].total) + ratchet)
    report(
        request.config,
        "privacy: cases from elsewhere, third-party + outside (tests/gateway/test_privacy_recall.py)",
        summary + rows(combined),
    )
    for part, (min_recall, max_blocked) in RATCHET.items():
        result = elsewhere[part]
        assert result.total.num_private >= 150, (part, "its cases are missing")
        # outside cases by their id: their texts stay unseen by whoever tunes the detector
        misses = [c.source if part.startswith("outside") else c for c in result.misses[:50]]
        false_alarms = [c.source if part.startswith("outside") else c for c in result.false_alarms[:50]]
        assert result.total.recall >= min_recall, (part, result.total.recall, misses)
        assert result.total.over_blocked <= max_blocked, (part, result.total.over_blocked, false_alarms)


def test_third_party_part_covers_every_source():
    cases = thirdparty_cases()
    sources = {case.source.split()[0] for case in cases}
    assert sources == {"python-stdnum", "phonenumbers", "faker", "presidio-evaluator", "detect-secrets"}
    assert len(cases) >= 2500 and sum(case.is_private for case in cases) >= 1500
    assert len({case.language for case in cases}) >= 40
    assert thirdparty_cases.__wrapped__() == cases  # deterministic: seeded, fixed order

"""Privacy measured, not asserted: recall per kind and the near-miss false-positive rate over a
labelled multilingual corpus (the seeded generator's cases, the hand-written hard cases and the
recognizers' own corpus), with the table printed at the end of the run."""

import collections

from gateway.privacy import find_personal_data
from tests.fixtures.report import report
from tests.gateway.privacy_cases import HAND_NEAR_MISSES, HAND_POSITIVES
from tests.gateway.privacy_corpus import NEAR_MISSES, POSITIVES
from tests.gateway.privacy_generator import near_misses, positives

MIN_RECALL, MAX_FALSE_POSITIVES = 0.99, 0.02


def _corpus():
    found = [*positives(), *HAND_POSITIVES, *((kind, "en", text) for kind, text in POSITIVES)]
    missed = [*near_misses(), *HAND_NEAR_MISSES, *(("near_miss", "en", text) for text in NEAR_MISSES)]
    return found, missed


def test_recall_per_kind_and_near_miss_false_positives(request):
    found, missed = _corpus()
    assert len(found) + len(missed) >= 600
    assert len({kind for kind, _, _ in found}) >= 15 and len({lang for _, lang, _ in found}) >= 7
    totals, hits, misses = collections.Counter(), collections.Counter(), []
    for kind, language, text in found:
        totals[kind] += 1
        if find_personal_data(text):
            hits[kind] += 1
        else:
            misses.append((kind, language, text))
    false_positives = [(kind, text) for kind, _, text in missed if find_personal_data(text)]
    rows = [
        f"{kind:24s} {hits[kind]:4d}/{totals[kind]:<4d} {hits[kind] / totals[kind]:7.1%}"
        for kind in sorted(totals)
    ]
    rate = len(false_positives) / len(missed)
    rows.append(f"{'near misses flagged':24s} {len(false_positives):4d}/{len(missed):<4d} {rate:7.1%}")
    report(request.config, "privacy recall per kind (tests/gateway/test_privacy_recall.py)", rows)
    low = {kind: hits[kind] / totals[kind] for kind in totals if hits[kind] / totals[kind] < MIN_RECALL}
    assert not low, (low, misses)
    assert rate <= MAX_FALSE_POSITIVES, false_positives

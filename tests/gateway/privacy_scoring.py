"""Recall and over-block rate of a privacy decision over labelled cases, in total, per kind and per
language, as the rows tests and benchmarks print. Recall: private cases kept on-prem / private
cases; over-blocked: public cases kept on-prem / public cases."""

import collections
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tests.gateway.privacy_cases import HAND_NEAR_MISSES, HAND_POSITIVES
from tests.gateway.privacy_corpus import NEAR_MISSES, POSITIVES
from tests.gateway.privacy_disclosure_cases import DISCLOSURE_NEAR_MISSES, DISCLOSURE_POSITIVES
from tests.gateway.privacy_generator import near_misses, positives
from tests.gateway.privacy_id_cases import ID_NEAR_MISSES, ID_POSITIVES
from tests.gateway.privacy_thirdparty import Case, elsewhere_cases, outside_cases, thirdparty_cases


@dataclass(slots=True)
class Tally:
    """Counts for one group of cases: (private, kept on-prem) and (public, kept on-prem)."""

    num_private: int = 0
    num_kept: int = 0
    num_public: int = 0
    num_blocked: int = 0

    def add(self, case: Case, is_private: bool) -> None:
        if case.is_private:
            self.num_private += 1
            self.num_kept += is_private
        else:
            self.num_public += 1
            self.num_blocked += is_private

    @property
    def recall(self) -> float | None:
        return self.num_kept / self.num_private if self.num_private else None

    @property
    def over_blocked(self) -> float | None:
        return self.num_blocked / self.num_public if self.num_public else None


@dataclass(slots=True)
class Score:
    total: Tally = field(default_factory=Tally)
    kind_to_tally: dict[str, Tally] = field(default_factory=lambda: collections.defaultdict(Tally))
    language_to_tally: dict[str, Tally] = field(default_factory=lambda: collections.defaultdict(Tally))
    misses: list[Case] = field(default_factory=list)  # private cases let out
    false_alarms: list[Case] = field(default_factory=list)  # public cases kept on-prem

    def add(self, case: Case, is_private: bool) -> None:
        for tally in (self.total, self.kind_to_tally[case.kind], self.language_to_tally[case.language]):
            tally.add(case, is_private)
        if case.is_private and not is_private:
            self.misses.append(case)
        elif is_private and not case.is_private:
            self.false_alarms.append(case)


def score(cases: Iterable[Case], decide: Callable[[str], bool]) -> Score:
    result = Score()
    for case in cases:
        result.add(case, decide(case.text))
    return result


def row(label: str, tally: Tally) -> str:
    def rate(num: int, of: int, value: float | None) -> str:
        return f"{num:5d}/{of:<5d} {value:6.1%}" if value is not None else f"{'-':>18s}"

    recall = rate(tally.num_kept, tally.num_private, tally.recall)
    blocked = rate(tally.num_blocked, tally.num_public, tally.over_blocked)
    return f"{label:26s} recall {recall}   over-blocked {blocked}"


def rows(result: Score) -> list[str]:
    lines = [row("all", result.total)]
    lines += [row(f"kind {kind}", result.kind_to_tally[kind]) for kind in sorted(result.kind_to_tally)]
    lines += [
        row(f"lang {lang}", result.language_to_tally[lang]) for lang in sorted(result.language_to_tally)
    ]
    return lines


def ours() -> list[Case]:
    """The cases we wrote: the seeded generator's, the hand-written hard cases and the
    recognizers' own corpus (tests/gateway/privacy_*.py)."""
    found = [*positives(), *HAND_POSITIVES, *ID_POSITIVES, *DISCLOSURE_POSITIVES]
    found += [(kind, "en", text) for kind, text in POSITIVES]
    missed = [
        *near_misses(),
        *HAND_NEAR_MISSES,
        *ID_NEAR_MISSES,
        *DISCLOSURE_NEAR_MISSES,
        *(("near_miss", "en", text) for text in NEAR_MISSES),
    ]
    return [Case(kind, lang, text, True, "ours") for kind, lang, text in found] + [
        Case(kind, lang, text, False, "ours") for kind, lang, text in missed
    ]


PARTS: dict[str, Callable[[], Iterable[Case]]] = {
    "ours": ours,
    "third-party": thirdparty_cases,
    "outside": outside_cases,
    "elsewhere": elsewhere_cases,
}

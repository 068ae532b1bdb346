"""What the recognizers' gates ask of a text, each computed once and only when first asked.

A gate is a necessary condition of a recognizer's matches (digits in a row or in one separated
number, a literal), never a heuristic: what the patterns and validators would find, they still
find (tests/gateway/test_privacy.py compares them on thousands of texts at the thresholds)."""

import re
from collections.abc import Callable

_DIGIT_RUNS = re.compile(r"\d+")
_ALNUM_RUNS = re.compile(r"[^\W_]+")  # letters and digits of any script
# digits joined by at most three of the separators any numeric pattern allows between digits
_DIGIT_CLUSTERS = re.compile(r"\d(?:[ ()./+-]{0,3}\d)*")


class TextFacts:
    __slots__ = ("_alnum", "_cluster", "_folded", "_run", "text")

    def __init__(self, text: str):
        self.text = text
        self._alnum: int | None = None
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
    def longest_alnum(self) -> int:
        """The most letters and digits in a row (a code of 16 characters needs such a word)."""
        if self._alnum is None:
            self._alnum = max(map(len, _ALNUM_RUNS.findall(self.text)), default=0)
        return self._alnum

    @property
    def longest_cluster(self) -> int:
        """The length of the longest stretch of digits joined by at most three separators; any
        number a pattern matches has all its digits in one such stretch."""
        if self._cluster is None:
            self._cluster = max(map(len, _DIGIT_CLUSTERS.findall(self.text)), default=0)
        return self._cluster

    @property
    def folded(self) -> str:
        """The text as a case-insensitive pattern sees it: casefolded (long s is s, Kelvin sign is
        k), and dotless i and dotted capital I (casefolded to i and a combining dot) as i: the
        letters `(?i)i` also matches."""
        if self._folded is None:
            self._folded = self.text.casefold().replace("\u0131", "i").replace("i\u0307", "i")
        return self._folded


Gate = Callable[[TextFacts], bool]


def digits(run: int = 0, cluster: int = 0) -> Gate:
    """Needs `run` digits in a row and a digit cluster at least `cluster` long."""
    return lambda facts: facts.longest_run >= run and facts.longest_cluster >= cluster


def alnum(length: int) -> Gate:
    """Needs a word of `length` letters and digits."""
    return lambda facts: facts.longest_alnum >= length


def contains(*literals: str) -> Gate:
    return lambda facts: any(literal in facts.text for literal in literals)


def folded_contains(*literals: str) -> Gate:
    return lambda facts: any(literal in facts.folded for literal in literals)


def both(first: Gate, second: Gate) -> Gate:
    return lambda facts: first(facts) and second(facts)

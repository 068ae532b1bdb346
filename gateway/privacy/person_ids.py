"""Find the catalogue's person identifiers (gateway/privacy/catalogue.py) in a text.

A candidate is a run of up to eight groups of digits and capital letters, one separator (space,
dot, dash, slash) between groups, with a digit in its first group or two; every run of
consecutive groups in it is a number someone may have written ("DNI 12345678Z" offers
"12345678Z"). A run is checked against the ids named by a word in the CONTEXT_CHARS before it,
and, named or not, against the STRONG ids of its compact length. Linear: the candidate pattern
is bounded and possessive; the work per candidate is bounded by its groups (8, so 36 runs).
"""

import re
from collections.abc import Iterator

from gateway.privacy.catalogue import Catalogue, PersonId, catalogue, fold

CANDIDATE = re.compile(
    r"(?<![\w.\-/])(?:[A-Z]{1,6}[ .\-/]?)?\d[0-9A-Z]{0,20}+(?:[ .\-/][0-9A-Z]{1,20}+){0,7}+(?![\w])"
)
CONTEXT_CHARS = 40
MIN_CHARS = 7  # the shortest catalogue number's letters and digits
MAX_GROUPS = 8
_GROUP = re.compile(r"[0-9A-Z]+")
_NOT_SPACED_SCRIPTS = 0x0E00  # Thai, CJK, kana, Hangul: words are found as substrings


def person_id_findings(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every catalogue id in the text."""
    found: list[tuple[str, int, int]] = []
    table = catalogue()
    for match in CANDIDATE.finditer(text):
        if match.end() - match.start() < MIN_CHARS:
            continue
        # the words before the candidate and its own letter groups ("RUT 12.531.909-2")
        named = _named(table, text[max(0, match.start() - CONTEXT_CHARS) : match.end()])
        for start, end in _runs(match):
            number = text[start:end]
            compact = sum(c.isalnum() for c in number)
            if compact < MIN_CHARS or sum(c.isdigit() for c in number) < 4:
                continue
            # without a word, only a number written as one (a spaced run is as often a phone's)
            strong = () if " " in number else table.length_to_strong.get(compact, ())
            for person_id in (*strong, *named):
                if person_id.is_valid(number):
                    found.append((person_id.kind, start, end))
    return list(dict.fromkeys(found))


def _runs(match: re.Match) -> Iterator[tuple[int, int]]:
    groups = [(g.start() + match.start(), g.end() + match.start()) for g in _GROUP.finditer(match.group())]
    for first in range(len(groups)):
        for last in range(first, min(len(groups), first + MAX_GROUPS)):
            yield groups[first][0], groups[last][1]


def _named(table: Catalogue, before: str) -> list[PersonId]:
    """The ids a word in `before` names: every sequence of up to max_words folded words, and the
    words of scripts written without spaces as substrings."""
    named: dict[PersonId, None] = {}
    words = fold(before).split()
    for size in range(1, table.max_words + 1):
        for first in range(len(words) - size + 1):
            named.update(dict.fromkeys(table.word_to_ids.get(" ".join(words[first : first + size]), ())))
    if not before.isascii():
        folded = before.casefold()
        for word, ids in table.word_to_ids.items():
            if ord(word[0]) >= _NOT_SPACED_SCRIPTS and word in folded:
                named.update(dict.fromkeys(ids))
    return list(named)

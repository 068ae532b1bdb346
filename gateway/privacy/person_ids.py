"""Find the catalogue's person identifiers (gateway/privacy/catalogue.py) in a text.

A candidate is a run of up to eight groups of digits and capital letters, one separator (space,
dot, dash, slash) between groups, with a digit in its first group or two; every run of
consecutive groups in it is a number someone may have written ("DNI 12345678Z" offers
"12345678Z"). A run is checked against the ids named by a word in the CONTEXT_CHARS before it,
and, named or not, against the STRONG ids of its compact length. Linear: the candidate pattern
is bounded and possessive; the work per candidate is bounded by its groups (8, so 36 runs).
"""

import re

from gateway.privacy.catalogue import Catalogue, PersonId, catalogue, fold

CANDIDATE = re.compile(
    r"(?<![\w.\-/])(?=[0-9A-Z .\-/]{7})"  # seven characters at least: the shortest number
    r"(?:[A-Z]{1,6}[ .\-/]?)?\d[0-9A-Z]{0,20}+(?:[ .\-/][0-9A-Z]{1,20}+){0,7}+(?![\w])"
)
CONTEXT_CHARS = 40
MIN_CHARS = 7  # the shortest catalogue number's letters and digits
MAX_GROUPS = 8
_GROUP = re.compile(r"[0-9A-Z]+")
_LABEL = re.compile(r"(?<![^\W\d_])([^\W\d_]{2})[ \t]?[:：][ \t]*$")  # "NN: ", "RČ: "


def person_id_findings(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every catalogue id in the text."""
    found: list[tuple[str, int, int]] = []
    table = catalogue()
    for match in CANDIDATE.finditer(text):
        runs = _runs(match)
        if not runs:
            continue
        # the words before the candidate and its own letter groups ("RUT 12.531.909-2")
        named = _named(table, text[max(0, match.start() - CONTEXT_CHARS) : match.end()])
        label = _LABEL.search(text, max(0, match.start() - 8), match.start())
        if label is not None:
            named.extend(table.label_to_ids.get(label.group(1), ()))
        for start, end, compact in runs:
            number = text[start:end]
            # without a word, only a number written as one (a spaced run is as often a phone's)
            strong = () if " " in number else table.length_to_strong.get(compact, ())
            for person_id in (*strong, *named):
                if person_id.is_valid(number):
                    found.append((person_id.kind, start, end))
    return list(dict.fromkeys(found))


def _runs(match: re.Match) -> list[tuple[int, int, int]]:
    """(start, end, letters and digits) of each run of consecutive groups that may be a number:
    seven letters and digits, four of them digits, at least."""
    groups = [
        (g.start() + match.start(), g.end() + match.start(), sum(c.isdigit() for c in g.group()))
        for g in _GROUP.finditer(match.group())
    ]
    runs = []
    for first in range(len(groups)):
        alnum = digits = 0
        for start, end, group_digits in groups[first : first + MAX_GROUPS]:
            alnum, digits = alnum + end - start, digits + group_digits
            if alnum >= MIN_CHARS and digits >= 4:
                runs.append((groups[first][0], end, alnum))
    return runs


def _named(table: Catalogue, before: str) -> list[PersonId]:
    """The ids a word in `before` names: every phrase of folded words the catalogue knows, and the
    words of scripts written without spaces as substrings."""
    named: dict[PersonId, None] = {}
    words = fold(before).split()
    for first, word in enumerate(words):
        for size in table.first_word_to_sizes.get(word, ()):
            ids = table.word_to_ids.get(" ".join(words[first : first + size]))
            if ids:
                named.update(dict.fromkeys(ids))
    if not before.isascii():
        folded = before.casefold()
        for word, ids in table.unspaced_word_to_ids:
            if word in folded:
                named.update(dict.fromkeys(ids))
    return list(named)

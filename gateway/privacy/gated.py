"""Patterns in parts, each run only where the text can hold one of its matches.

Python's regex engine tries every branch of an alternation at every position, so one pattern
with a branch per language costs a try per branch at each character: the relationship words of
13 languages took 15 ms over a 64 KB English prompt, their English branch alone 1 ms. Split by
language, a part runs only when its gate passes: its script occurs in the text (a search for one
character class, which the engine runs in a tight loop), or, for a part whose every match holds
one of a few literals, only around where one occurs (found by `str.find` in the lowercased
text, tabs read as spaces). A gate is a necessary condition of the part's matches, never a
heuristic: what the whole pattern would find, the parts still find (no part's match is longer
than REACH_AFTER characters, nor holds its literal farther than REACH_BEFORE from its start).
"""

import re
from dataclasses import dataclass

SCRIPTS = {
    "cyrillic": "\u0400-\u04ff",
    "arabic": "\u0600-\u06ff\u0750-\u077f",
    "devanagari": "\u0900-\u097f",
    "han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
    "kana": "\u3040-\u30ff",
    "hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3",
}
REACH_BEFORE, REACH_AFTER = 40, 200
_META = re.compile(r"[\\\[\](){}?*+|.^$]")


@dataclass(frozen=True, slots=True)
class Part:
    """A pattern and what its matches need: a character of `script` (a compiled character
    class), or one of `literals` (lowercase) near them; neither: it runs over all the text."""

    pattern: re.Pattern
    script: re.Pattern | None = None
    literals: tuple[str, ...] = ()

    def windows(self, text: str, lowered: str) -> list[tuple[int, int]]:
        """The stretches of `text` this part must scan (merged, in order)."""
        if self.script is not None:
            return [(0, len(text))] if self.script.search(text) else []
        if not self.literals:
            return [(0, len(text))]
        around: list[tuple[int, int]] = []
        most = len(text) // REACH_AFTER  # more windows than this would cover the whole text
        for literal in self.literals:
            at = lowered.find(literal)
            while at != -1:
                if len(around) > most:
                    return [(0, len(text))]
                around.append((max(0, at - REACH_BEFORE), min(len(text), at + REACH_AFTER)))
                at = lowered.find(literal, at + 1)
        return _merged(around)


def _merged(lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(lines):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def in_script(pattern: str, *scripts: str) -> Part:
    """A part whose every match holds a character of one of `scripts` (names of SCRIPTS)."""
    chars = "".join(SCRIPTS[name] for name in scripts)
    return Part(re.compile(pattern), script=re.compile(f"[{chars}]"))


def after_words(pattern: str, literals: str) -> Part:
    """A part whose every match holds one of `literals` (lowercase, space-separated; "_" is a
    space: "ma_" is the word "ma" before a space or a tab)."""
    assert literals == literals.lower(), literals
    return Part(re.compile(pattern), literals=tuple(w.replace("_", " ") for w in literals.split()))


def of_words(pattern: str, fragments: list[str]) -> Part:
    """A part matching one of `fragments` (regex fragments, `alternation`'s input): gated by
    each fragment's literal start, or run over all the text when one starts with too little."""
    prefixes = [_META.split(fragment, maxsplit=1)[0].lower() for fragment in fragments]
    if any(len(prefix) < 2 for prefix in prefixes):
        return Part(re.compile(pattern))
    return Part(re.compile(pattern), literals=tuple(sorted(set(prefixes))))


def always(pattern: str) -> Part:
    return Part(re.compile(pattern))


@dataclass(frozen=True, slots=True)
class GatedPattern:
    """A pattern's parts; `finditer` and `search` read like a compiled pattern's."""

    parts: tuple[Part, ...]

    def finditer(self, text: str) -> list[re.Match]:
        lowered = _lowered(text) if any(part.literals for part in self.parts) else text
        matches = [
            match
            for part in self.parts
            for start, end in part.windows(text, lowered)
            for match in part.pattern.finditer(text, start, end)
        ]
        return sorted(matches, key=lambda match: match.start()) if len(self.parts) > 1 else matches

    def search(self, text: str) -> re.Match | None:
        """A match if there is one (the first part's, not necessarily the leftmost)."""
        lowered = _lowered(text) if any(part.literals for part in self.parts) else text
        for part in self.parts:
            for start, end in part.windows(text, lowered):
                if match := part.pattern.search(text, start, end):
                    return match
        return None


def _lowered(text: str) -> str:
    """Lowercased with the same length (U+0130 is the one letter whose lowercase is two)."""
    return text.replace("\u0130", "i").lower().replace("\t", " ")


def gated(*parts: Part) -> GatedPattern:
    return GatedPattern(parts)

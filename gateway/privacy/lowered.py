"""Case-insensitive patterns run on a lowercased copy of the text, without `(?i)`: the engine
then compares characters as they are instead of case-folding each one it tries (about twice as
fast for the vocabularies' long alternations).

The copy has the text's length, so positions carry over: U+0130 (İ, whose lowercase is two
characters) is written `i`, as `(?i)` reads it. The letters `(?i)` also takes as equal (ı and i,
ſ and s, µ and μ, ς and σ, ...: re's case fixes) are written as one of them, in the copy and in
the pattern alike. A pattern qualifies only when its text is already lowercase (an escape such as
`\\W` or `\\D` would change meaning), which `case_blind` asserts.
"""

import re
from re._casefix import _EXTRA_CASES  # the letters (?i) matches beyond lowercase equality

_SAME = {code: min(code, *others) for code, others in _EXTRA_CASES.items()}
_CANONICAL = str.maketrans({code: same for code, same in _SAME.items() if code != same})


def lowered(text: str) -> str:
    """`text` lowercased, as long as `text`, with each of re's case-equal letters as one."""
    if text.isascii():
        return text.lower()
    return text.replace("\u0130", "i").lower().translate(_CANONICAL)


def case_blind(pattern: re.Pattern) -> re.Pattern:
    """`pattern` (which starts with `(?i)`) without it, to be run on `lowered(text)`: it matches
    there where `pattern` matches in `text`, at the same positions."""
    source = pattern.pattern
    assert source.startswith("(?i)") and source == source.lower(), source
    return re.compile(source.removeprefix("(?i)").translate(_CANONICAL), pattern.flags & ~re.IGNORECASE)

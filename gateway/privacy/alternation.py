"""One regex alternation of many words, grouped by first letter: Python's engine tries the
branches of an alternation one after the other at every position, so 300 words cost 300 checks
at each word start; grouped under their first letter (`d(?:iabet|iagnos|ement)`) they cost a
few. The words are regex fragments; one that starts with anything but a plain letter keeps its
own branch."""


def alternation(fragments: list[str]) -> str:
    """`(?:...)` matching what `(?:fragment|fragment|...)` matches, longest fragments first
    within each letter (a fragment that is a prefix of another must not shadow it)."""
    by_letter: dict[str, list[str]] = {}
    others = []
    for fragment in sorted(set(fragments), key=len, reverse=True):
        first = fragment[:1]
        if first.isalpha() and fragment[1:2] not in ("?", "*", "+", "{"):
            by_letter.setdefault(first.lower(), []).append(fragment[1:])
        else:
            others.append(fragment)
    groups = [
        letter + ("(?:" + "|".join(rests) + ")" if rests != [""] else "")
        for letter, rests in by_letter.items()
    ]
    return "(?:" + "|".join(groups + others) + ")"

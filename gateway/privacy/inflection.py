"""The forms a name takes in a sentence, back to the form name lists hold: Russian (and other
Cyrillic) case endings ("для Светланы Кудрявцевой" → Светлана, Кудрявцева; "с Игорем" → Игорь),
Arabic and Hebrew proclitics written onto the word ("ليوسف" for Yusuf → يوسف, "وأحمد" → أحمد,
"לדנה" → דנה). A linguistic rule, not a list: gateway/privacy/script_names.py asks the name
index for each base form.
"""

import functools

# a case ending, and what the nominative ends with instead (feminine -а/-я, masculine nothing/-ь/-ий)
_CYRILLIC_ENDINGS = (
    ("ого", ("ий", "ой", "")), ("его", ("ий", "")), ("ому", ("ий", "ой", "")), ("ему", ("ий", "")),
    ("ой", ("а", "ая", "")), ("ей", ("я", "а", "ь")), ("ою", ("а",)), ("ым", ("", "ый")),
    ("им", ("ий", "")), ("ом", ("",)), ("ем", ("ь", "й", "")), ("ую", ("ая",)),
    ("ы", ("а",)), ("и", ("я", "а", "ь")), ("е", ("а", "я", "")), ("у", ("а", "")), ("ю", ("я", "ь")),
    ("а", ("",)), ("я", ("ь", "й")),
)  # fmt: skip
_ARABIC_PROCLITICS = ("وال", "بال", "فال", "كال", "لل", "و", "ل", "ب", "ف", "ك")
_HEBREW_PROCLITICS = ("וה", "וב", "ול", "ו", "ה", "ל", "ב", "מ", "ש", "כ")


@functools.lru_cache(maxsize=4096)
def base_forms(word: str) -> tuple[str, ...]:
    """Candidate dictionary forms of `word` (not `word` itself), most likely first."""
    if len(word) < 4:
        return ()
    first = word[0]
    if "\u0400" <= first <= "\u04ff":
        forms = []
        for ending, replacements in _CYRILLIC_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                forms += [word[: -len(ending)] + replacement for replacement in replacements]
        return tuple(forms)
    if "\u0600" <= first <= "\u06ff":
        return tuple(_unprefixed(word, _ARABIC_PROCLITICS, definite="ال"))
    if "\u0590" <= first <= "\u05ff":
        return tuple(_unprefixed(word, _HEBREW_PROCLITICS))
    return ()


def _unprefixed(word: str, proclitics: tuple[str, ...], definite: str = "") -> list[str]:
    forms = []
    for proclitic in proclitics:
        if word.startswith(proclitic) and len(word) - len(proclitic) >= 3:
            rest = word[len(proclitic) :]
            forms.append(rest)
            if definite and proclitic.endswith(definite[-1]) and len(proclitic) > 1:
                forms.append(definite + rest)  # "لل" + word: "ل" + "ال" + word
    return forms

"""Which countries' national phone formats a text may use, from the language it is written in.

The script says it for most (Hangul: KR; kana: JP; Han: CN, TW; Cyrillic: Russian; Devanagari:
Hindi; Arabic script: Arabic); Latin-script texts by their commonest words (a handful each for
Spanish, Portuguese, Italian, Dutch, German, French; English's countries are the phone
recognizer's defaults already). A language's countries are Faker's locales
for it (`faker.config.AVAILABLE_LOCALES`: es -> ES, MX, AR, CL, CO, VE, ...; pt -> BR, PT; ar ->
AE, BH, DZ, EG, JO, PS, SA), a catalogue kept by others, not a list of ours.
"""

import functools
import re

from faker.config import AVAILABLE_LOCALES

SCRIPTS = (  # (language, a character of its script)
    ("ko", re.compile(r"[\uac00-\ud7a3]")),
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
)
LATIN_WORDS = {  # words frequent in one language and rare in the others
    "es": {
        "el",
        "los",
        "las",
        "del",
        "por",
        "para",
        "con",
        "una",
        "que",
        "mi",
        "está",
        "mañana",
        "llamar",
        "al",
        "llámame",
        "número",
    },
    "pt": {
        "não",
        "você",
        "um",
        "uma",
        "com",
        "os",
        "das",
        "dos",
        "em",
        "na",
        "ao",
        "às",
        "sem",
        "meu",
        "é",
        "da",
        "seu",
    },
    "it": {"il", "gli", "della", "che", "per", "una", "sono", "mio", "mia", "chiamare", "è", "di"},
    "nl": {"de", "het", "een", "van", "en", "niet", "mijn", "voor", "met", "bellen", "aan", "naar"},
    "de": {"der", "die", "das", "und", "nicht", "ist", "mein", "meine", "mit", "für", "anrufen"},
    "fr": {"le", "les", "des", "est", "une", "pour", "avec", "mon", "ma", "appeler", "du", "au"},
}
_WORDS = re.compile(r"[^\W\d_]+")
MIN_LATIN_HITS = 2


@functools.lru_cache(maxsize=4)
def regions_of(text: str) -> tuple[str, ...]:
    """The regions of the text's languages (empty when none is clear)."""
    regions: list[str] = []
    for language in languages_of(text):
        regions.extend(_regions_of_language(language))
    return tuple(dict.fromkeys(regions))


def languages_of(text: str) -> list[str]:
    found = [language for language, script in SCRIPTS if script.search(text)]
    if text.isascii() or not found:
        words = _WORDS.findall(text.lower()[:4096])
        counts = {language: sum(word in known for word in words) for language, known in LATIN_WORDS.items()}
        best = max(counts.values())
        found += [language for language, n in counts.items() if n >= max(MIN_LATIN_HITS, best / 2)]
    return found


@functools.cache
def _regions_of_language(language: str) -> tuple[str, ...]:
    return tuple(locale.split("_")[1] for locale in AVAILABLE_LOCALES if locale.startswith(f"{language}_"))

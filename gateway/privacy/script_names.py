"""Names that no honorific announces: a name-shaped word after a relationship, role or own-name
word ("my husband Callum", "患者陈思彤", "мой брат Тимур", "زوجي أحمد"), and names in scripts
other than Latin and Han (Cyrillic, Greek, Arabic, Hebrew, Devanagari, ...) told apart from
ordinary words by names-dataset and wordfreq (gateway/privacy/name_index.py).

Name-shaped, after a person word: a capitalized word in a cased script (any name: the person
word already says a person follows), a word of the name index in a caseless one, a Chinese
surname with one or two more Han characters, a Korean surname with two more syllables. On its
own: two words of the index in a row ("Иван Петров", "أحمد محمد", "राहुल शर्मा"), or one that is
only a name ("Nokuthula"), capitalized where the script has case.
"""

import re

from gateway.privacy.inflection import base_forms
from gateway.privacy.name_index import NameIndex
from gateway.privacy.person_words import (
    BARE_RELATION,
    NAME_FIELD,
    OWN_NAME,
    OWN_NAME_IF_NAME,
    RELATION,
    ROLE,
)
from gateway.privacy.rare_words import rare_word

_AFTER = re.compile(
    r"[ \t:：,，\"“'‘(（—–-]{0,4}(?:(?:o|a|la|el|le|il|lo|the)[ \t]{1,2})?"
    r"(?:(?:Dr|Mr|Mrs|Ms|Miss|Prof|Herr|Herrn|Frau|Mme|Don|Doña|Dhr|Mevr|Sig|Sra|Sr|श्री|श्रीमती|सुश्री|السيد|السيدة|г-н|г-жа)\.?"
    r"[ \t]{1,2})?"
)
# Latin Extended-A (Đ, Ł, Š, ı, ő) holds capitals and small letters alike: a name's first letter
# there is taken as a capital
_CASED_WORD = re.compile(
    r"[A-ZÀ-ÖØ-ÞА-ЯЁΑ-ΩĀ-ž][a-zß-öø-ÿа-яёά-ώĀ-ž'’]+(?:-[A-ZÀ-ÖØ-ÞА-ЯЁĀ-ž][a-zß-öø-ÿа-яёĀ-ž'’]+)*"
)
_LOWER_WORD = re.compile(r"[a-zß-öø-ÿа-яё]{3,}")
# letters of scripts without case (and their vowel marks), and of Cyrillic and Greek
_SCRIPT_WORD = re.compile(  # letters, not the Arabic comma, semicolon and question mark nor the danda
    r"[\u0590-\u05ff\u0600-\u060b\u060d-\u061a\u061c-\u061e\u0620-\u06d3\u06d5-\u06ff\u0750-\u077f"
    r"\u0900-\u0963\u0966-\u097f\u0980-\u09ff\u0b80-\u0bff\u0400-\u04ff\u0370-\u03ff]+"
)
# an age right after a word: "अंकित (22)", "سارة، ٣١ سنة" (digits already ASCII), "Олеся, 29 лет"
_AGE = re.compile(
    r"[ \t]*(?:[(（]\d{1,2}[)）]|[,،][ \t]*\d{1,2}[ \t]*(?:years?|y/?o|años|anos|ans|jahre|jaar|anni|лет|год"
    r"|سنة|سنوات|عاما|عامًا|साल|वर्ष)\b)",
    re.IGNORECASE,
)
_HAN = re.compile(r"[\u4e00-\u9fff]{2,3}")
_HANGUL = re.compile(r"[\uac00-\ud7a3]{3}")
# one to four words of a script other than Latin (letters and their marks), and two capitalized words
_LETTER = r"(?:[^\W\d_A-Za-z\u00c0-\u024f]|[\u0900-\u0dff\u0e00-\u0e7f])"  # Indic and Thai marks too
_FOREIGN_WORDS = re.compile(rf"{_LETTER}+(?:[ \t]{_LETTER}+){{0,3}}")
_CASED_PAIR = re.compile(
    r"([A-ZÀ-ÖØ-ÞĀ-ž][a-zß-öø-ÿĀ-ž'’-]+)[ \t](?:[A-Z]\.[ \t])?([A-ZÀ-ÖØ-ÞĀ-ž][a-zß-öø-ÿĀ-ž'’-]+)"
)
# a Russian patronymic (in any case: "Игоревны", "Ильич") is a name by its shape alone; a surname's
# shape ("Чайковский", "Кудрявцевой") is one after a name
_RU_PATRONYMIC = re.compile(r"[А-ЯЁ][а-яё]{2,}(?:ович|евич|ьич|ич|овн|евн|ичн)(?:а|у|ем|ом|е|ы|ой|ою)?")
_RU_SURNAME = re.compile(r"[А-ЯЁ][а-яё]{2,}(?:ов|ев|ёв|ин|ын|ск|цк)(?:а|ой|у|ым|ом|е|ая|ий|ого|ому|им|ую)?")
# capitalized words that follow a person word without being a name
_NOT_NAME_WORDS = (
    "i the a an and or but is was has had who which that this in on at to for with from of by my our "
    "his her their he she it they we you monday tuesday wednesday thursday friday saturday sunday "
    "january february march april june july august september october november december"
)
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())


def anchored_names(
    text: str, names: dict[str, frozenset[str]], index: NameIndex
) -> list[tuple[int, int, str]]:
    """(start, end, "relation") of each relationship word, and (start, end, "anchored") of each
    person word followed by a name-shaped word."""
    relations = list(RELATION.finditer(text))
    spans = [(m.start(), m.end(), "relation") for m in relations]
    for match in [*relations, *ROLE.finditer(text), *OWN_NAME.finditer(text)]:
        end = _name_after(text, _AFTER.match(text, match.end()).end(), names, index)
        if end is not None:
            spans.append((match.start(), end, "anchored"))
    for match in OWN_NAME_IF_NAME.finditer(text):
        at = _AFTER.match(text, match.end()).end()
        if (word := _CASED_WORD.match(text, at)) and (
            index.is_any_name(word.group()) or word.group().lower() in names["latin_first"]
        ):
            spans.append((match.start(), word.end(), "anchored"))
    for match in NAME_FIELD.finditer(text):
        at = _AFTER.match(text, match.end()).end()
        end = _known_name_after(text, at, names, index) or _shaped_name_after(text, match, at)
        if end is not None:
            spans.append((match.start(), end, "anchored"))
    for match in BARE_RELATION.finditer(text):  # "Daughter Gillian": a named person, not anchored
        if (
            word := _CASED_WORD.match(text, _AFTER.match(text, match.end()).end())
        ) and word.group().casefold() not in _NOT_NAMES:
            spans.append((match.start(), word.end(), "title"))
    return spans


def _name_after(text: str, at: int, names: dict[str, frozenset[str]], index: NameIndex) -> int | None:
    """Where the name that starts at `at` ends, or None when no name-shaped word starts there."""
    if cased := _CASED_WORD.match(text, at):
        return None if cased.group().casefold() in _NOT_NAMES else cased.end()
    if (lower := _LOWER_WORD.match(text, at)) and lower.group() in index.first:
        return lower.end()
    if (word := _SCRIPT_WORD.match(text, at)) and (
        _any_name(word.group(), names, index) or _AGE.match(text, word.end())
    ):
        return word.end()
    if text[at : at + 1] in ("小", "老", "阿") and text[at + 1 : at + 2] in names["zh_surname"]:
        return at + 2  # 小刘, 老王: a surname said familiarly
    if text[at : at + 2] in names["ja_surname"] or text[at : at + 3] in names["ja_surname"]:
        return at + 2 + (text[at : at + 3] in names["ja_surname"])  # 児童 山本, 依頼者 中村
    if (han := _HAN.match(text, at)) and han.group()[0] in names["zh_surname"]:
        written = han.group()
        if written[:2] in names["zh_surname"]:  # 欧阳, 司马: the given name follows
            return None if written[1:3] in index.han_words else han.end()
        return None if written[:2] in index.han_words or written[1:3] in index.han_words else han.end()
    if (hangul := _HANGUL.match(text, at)) and hangul.group()[0] in names["ko_surname"]:
        return hangul.end()
    return None


def _known_name_after(text: str, at: int, names: dict[str, frozenset[str]], index: NameIndex) -> int | None:
    """Where a known name starting at `at` ends: a capitalized word that is only a name, or
    two capitalized words one of which is a name ("Alma Russo", "Jóhann Brynjólfsson"); a
    name of the index in another script; a Chinese or Korean surname with a given name."""
    if cased := _CASED_WORD.match(text, at):
        first = cased.group().casefold()
        second = _CASED_WORD.match(text, _AFTER.match(text, cased.end()).end())
        if first in _NOT_NAMES or (
            first in names["latin_first"] and second is None and first in index.ordinary
        ):
            return None
        if index.is_name(first) or first in names["latin_first"] or first in names["latin_last"]:
            return (second or cased).end()
        if second and (index.is_any_name(second.group()) or second.group().casefold() in names["latin_last"]):
            return second.end()
        return None
    return _name_after(text, at, names, index)


def _shaped_name_after(text: str, field: re.Match, at: int) -> int | None:
    """Where a name starting at `at` ends, known or not, after a name field: words of another
    script than the field's ("What's your name? ზაქარია თედორაძე", "it's under المهندسة باهرة"),
    or two capitalized words that are rare as words ("Lika Balashova", "Mille N. Kristensen")."""
    if field.group().isascii() and (foreign := _FOREIGN_WORDS.match(text, at)):
        return foreign.end()
    if (pair := _CASED_PAIR.match(text, at)) and all(rare_word(word) for word in pair.group(1, 2)):
        return pair.end()
    return None


def _any_name(word: str, names: dict[str, frozenset[str]], index: NameIndex) -> bool:
    """A name of the index or of Faker's lists, as written or in its dictionary form (a Russian
    case ending, an Arabic or Hebrew proclitic: gateway/privacy/inflection.py)."""
    return _RU_PATRONYMIC.fullmatch(word) is not None or any(
        index.is_any_name(form) or form.casefold() in names["script_names"]
        for form in (word, *base_forms(word))
    )


def script_names(text: str, names: dict[str, frozenset[str]], index: NameIndex) -> list[tuple[int, int, str]]:
    """(start, end, "name") of names written in a non-Latin alphabet or abjad; a run of name words
    ("Пётр Ильич Чайковский") is one span."""
    words = [m for m in _SCRIPT_WORD.finditer(text) if _shaped(m.group())]
    spans: list[tuple[int, int, str]] = []
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else None
        is_pair = (
            following is not None
            and following.start() - word.end() <= 2
            and not word.group().startswith("ال")  # an Arabic given name has no article: "المصري الجديد"
            and _any_name(word.group(), names, index)
            and (_any_name(following.group(), names, index) or _RU_SURNAME.fullmatch(following.group()))
        )
        if is_pair and spans and spans[-1][1] == word.end():
            spans[-1] = (spans[-1][0], following.end(), "name")
        elif is_pair:
            spans.append((word.start(), following.end(), "name"))
        elif word.group().casefold() in index.first and len(word.group()) >= 4:
            spans.append((word.start(), word.end(), "name"))
    return spans


def _shaped(word: str) -> bool:
    """A cased script's name starts with a capital; a caseless script's word may be a name."""
    return not word[0].islower()

"""The forms people write personal data in, brought back to one the recognizers read.

`normalize` is the base view: HTML and URL escapes of `@` and `.` resolved, NFKC (full-width
digits and letters), invisible characters out (zero-width, soft hyphen, bidi marks), and the
decimal digits of every script as ASCII. `views` adds, only where they differ from it:
- digit groups joined: line breaks, dashes, underscores, bullets and filler words ("then", "and",
  "und", "然后") between digit groups become one space, so a card split over two lines or words
  is one number again;
- numbers spelled out digit by digit (English, German, French, Spanish, Italian, Chinese,
  Japanese, Korean) written as digits;
- e-mail addresses written to dodge filters: `[at]`, `(at)`, ` at `, `[dot]`, ` dot `.
Each view is scanned on its own, so a join never hides what the base view shows. Every pattern
here is linear (bounded repetitions, no nested unbounded ones).
"""

import html
import re
import unicodedata
from collections.abc import Iterator

INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]"
)
_URL_ESCAPE = re.compile(r"%(40|2[Ee])")
_NON_ASCII_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script
# dashes between digits as people type them (the Japanese long-vowel mark ー included): a hyphen
_DIGIT_DASH = re.compile(r"(?<=\d)[\u2010-\u2015\u2212\u30fc\uff70\ufe63](?=\d)")
FILLERS = (
    "then|and|und|dann|et|puis|y|luego|e|poi|next|plus|followed by|after that|space|dash|"
    "然后|和|接着|再|それから|と|그리고|다음"
)
_DIGIT_JOIN = re.compile(
    r"(?<=\d)(?:[ \t]{0,8}(?:\r?\n|[–—_·•|,;:~]){1,3}[ \t]{0,8}"
    rf"|[ \t]{{0,8}}[(\[]?(?i:{FILLERS})[)\]]?[ \t]{{0,8}}|[ \t]{{2,8}})(?=\d)"
)
NUMBER_WORDS = {
    **dict.fromkeys(["zero", "oh", "null", "zéro", "zero", "cero"], "0"),
    **dict.fromkeys(["one", "eins", "un", "une", "uno"], "1"),
    **dict.fromkeys(["two", "zwei", "zwo", "deux", "dos", "due"], "2"),
    **dict.fromkeys(["three", "drei", "trois", "tres", "tre"], "3"),
    **dict.fromkeys(["four", "vier", "quatre", "cuatro", "quattro"], "4"),
    **dict.fromkeys(["five", "fünf", "fuenf", "cinq", "cinco", "cinque"], "5"),
    **dict.fromkeys(["six", "sechs", "seis", "sei"], "6"),
    **dict.fromkeys(["seven", "sieben", "sept", "siete", "sette"], "7"),
    **dict.fromkeys(["eight", "acht", "huit", "ocho", "otto"], "8"),
    **dict.fromkeys(["nine", "neun", "neuf", "nueve", "nove"], "9"),
}
_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
# four or more number words in a row (a single "one" or "two" in prose is left alone)
_SPELLED = re.compile(rf"(?i)\b(?:{_WORD})(?:[ \t,-]{{1,3}}(?:{_WORD})){{3,40}}\b")
_SPELLED_WORD = re.compile(rf"(?i)\b(?:{_WORD})\b")
CJK_DIGITS = {
    **dict.fromkeys("零〇洞", "0"),
    **dict.fromkeys("一幺壹", "1"),
    **dict.fromkeys("二两贰", "2"),
    **dict.fromkeys("三叁", "3"),
    **dict.fromkeys("四肆", "4"),
    **dict.fromkeys("五伍", "5"),
    **dict.fromkeys("六陆", "6"),
    **dict.fromkeys("七柒", "7"),
    **dict.fromkeys("八捌", "8"),
    **dict.fromkeys("九玖", "9"),
    **dict.fromkeys("공영", "0"),
    "일": "1",
    "이": "2",
    "삼": "3",
    "사": "4",
    "오": "5",
    "육": "6",
    "칠": "7",
    "팔": "8",
    "구": "9",
}
# seven or more in a row (a phone number's or card's worth), spaces or dashes between groups
_CJK_SPELLED = re.compile(rf"[{''.join(CJK_DIGITS)}](?:[ \-]?[{''.join(CJK_DIGITS)}]){{6,24}}")
_AT = r"(?:@|at|arroba|chez|ät|艾特|アット|골뱅이)"
_DOT = r"(?:\.|dot|punkt|point|punto|点|ドット|닷|쩜)"
_BRACKETED_AT = re.compile(rf"(?i)[ \t]{{0,3}}[\[({{<][ \t]{{0,2}}{_AT}[ \t]{{0,2}}[\])}}>][ \t]{{0,3}}")
_BRACKETED_DOT = re.compile(rf"(?i)[ \t]{{0,3}}[\[({{<][ \t]{{0,2}}{_DOT}[ \t]{{0,2}}[\])}}>][ \t]{{0,3}}")
_SPACED_AT = re.compile(r"(?i)(?<=\w)[ \t]{1,3}(?:at|arroba|chez|艾特)[ \t]{1,3}(?=\w)")
_SPACED_DOT = re.compile(r"(?i)(?<=\w)[ \t]{1,3}(?:dot|punkt|point|punto|点)[ \t]{1,3}(?=\w)")


def normalize(text: str) -> str:
    if "&" in text:
        text = html.unescape(text)
    if "%" in text:
        text = _URL_ESCAPE.sub(lambda m: "@" if m.group(1) == "40" else ".", text)
    if not text.isascii():
        text = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
        text = _NON_ASCII_DIGIT.sub(_ascii_digit, text)
        text = _DIGIT_DASH.sub("-", text)
    return text


def _ascii_digit(match: re.Match) -> str:
    char = match.group()
    value = unicodedata.decimal(char, None)
    return char if value is None else str(value)


def views(text: str) -> Iterator[tuple[str, str]]:
    """(name, view): the normalized text ("base"), then each other view that differs from it
    ("spelled", "joined", "email")."""
    base = normalize(text)
    yield "base", base
    seen = {base}
    spelled = _spelled(base)
    for name, view in (("spelled", spelled), ("joined", _joined(spelled)), ("email", _email(base))):
        if view not in seen:
            seen.add(view)
            yield name, view


_NOT_DIGITS = str.maketrans("", "", "0123456789")
_WORD_SPLIT = re.compile(r"[\W_]+")
# the e-mail view is needed only where `at` is spelled somehow
_AT_HINT = re.compile(r"(?i)[\s\[({<](?:at|arroba|chez|ät)[\s\])}>]|艾特|アット|골뱅이|[\[({<]\s?@")


def _joined(text: str) -> str:
    """Only a text with a long number's worth of digits can join one (9: the shortest checked)."""
    if len(text) - len(text.translate(_NOT_DIGITS)) < 9:
        return text
    return _DIGIT_JOIN.sub(" ", text)


def _spelled(text: str) -> str:
    if not text.isascii() and sum(map(text.count, CJK_DIGITS)) >= 7:
        text = _CJK_SPELLED.sub(lambda m: "".join(CJK_DIGITS.get(c, c) for c in m.group()), text)
    if _longest_number_word_run(_WORD_SPLIT.split(text.lower())) < 4:  # _SPELLED: four in a row
        return text
    return _SPELLED.sub(_words_as_digits, text)


def _longest_number_word_run(words: list[str]) -> int:
    longest = run = 0
    for word in words:
        run = run + 1 if word in NUMBER_WORDS else 0
        longest = max(longest, run)
    return longest


def _words_as_digits(match: re.Match) -> str:
    return _SPELLED_WORD.sub(lambda m: NUMBER_WORDS[m.group().lower()], match.group()).replace(" ", "")


def _email(text: str) -> str:
    """Only where `at` is spelled or a dot bracketed ("[.]" is also how a regex writes a dot)."""
    if _AT_HINT.search(text) is None and _BRACKETED_DOT.search(text) is None:
        return text
    text = _BRACKETED_DOT.sub(".", _BRACKETED_AT.sub("@", text))
    if "@" in text or _SPACED_AT.search(text):
        text = _SPACED_DOT.sub(".", _SPACED_AT.sub("@", text))
    return text

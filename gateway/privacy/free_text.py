"""Personal data that no pattern catches: a person together with health, financial, employment
or identity details, a birth date or a street address; and clinical notes.

A finding needs two things near each other (within WINDOW characters): a person reference
(gateway/privacy/names.py) and a sensitive detail (gateway/privacy/vocabularies.py, a birth
date, an address). A topic alone ("what are the symptoms of diabetes?") is not personal data;
neither is a public figure in a history question ("did Lincoln suffer from depression?"): a
known public figure's name, with no patient, record or employee words around.
A clinical note is recognized by its structure alone (three kinds of clinical cues: section
headers, vital signs, doses, age and sex shorthand, ICD-10 codes), named or not.
"""

import re

from gateway.privacy.address_anchors import anchored_addresses
from gateway.privacy.addresses import ADDRESS
from gateway.privacy.examples import is_dummy_name
from gateway.privacy.figures import historical_figure
from gateway.privacy.lowered import case_blind, lowered
from gateway.privacy.names import name_index, person_spans
from gateway.privacy.occasions import for_an_occasion
from gateway.privacy.possessed import possessed
from gateway.privacy.service_context import company_name
from gateway.privacy.vocabularies import BIRTH_WORDS, CATEGORIES

WINDOW = 160
DETAIL_CHARS = 200  # longer than any detail match (an address is the longest)
VERSION = "free-text-3"
_MONTHS = (
    r"jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|févr(?:ier)?|mar(?:ch|s)?|märz|apr(?:il)?|avr(?:il)?|may|mai"
    r"|jun(?:e|i)?|juin|jul(?:y|i)?|juil(?:let)?|aug(?:ust)?|août|sep(?:t(?:ember|embre)?)?|oct(?:ober|obre)?"
    r"|okt(?:ober)?|nov(?:ember|embre)?|dec(?:ember)?|dez(?:ember)?|déc(?:embre)?|enero|febrero|marzo|abril"
    r"|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre"
)
DATE = re.compile(
    r"(?i)(?<!\d)(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)?\d{2}|(?:19|20)\d{2}[./-]\d{1,2}[./-]\d{1,2}"
    rf"|\d{{1,2}}\.?[ \t]{{1,2}}(?:de[ \t])?(?:{_MONTHS})\.?[ \t]{{1,2}}(?:de[ \t])?(?:19|20)\d{{2}}"
    rf"|(?:{_MONTHS})\.?[ \t]{{1,2}}\d{{1,2}}(?:st|nd|rd|th)?,?[ \t]{{1,2}}(?:19|20)\d{{2}}"
    r"|(?:19|20)\d{2}[ \t]?[年년][ \t]?\d{1,2}[ \t]?[月월][ \t]?\d{1,2}[ \t]?[日일]?)(?!\d)"
)
CLINICAL_CUES = {
    "section": re.compile(
        r"(?i)\b(?:chief complaint|cc:|hpi\b|history of present illness|pmh\b|past medical history|"
        r"assessment(?: and plan)?:|a/p:|plan:|physical exam|review of systems|ros:|discharge summary|"
        r"impression:|dx:|diagnosis:|anamnese|befund:|diagnose:|epikrise|antécédents|examen clinique|"
        r"antecedentes|exploración física|motivo de consulta)"
        r"|主诉|现病史|既往史|体格检查|初步诊断|诊断：|诊断:|医嘱|主訴|現病歴|既往歴|診断：|주호소|현병력|과거력|진단명"
    ),
    "vitals": re.compile(
        r"(?i)\b(?:bp|blood pressure|rr|hr|pulse|spo2|sao2|temp|t)[ \t:]{0,3}\d{2,3}(?:/\d{2,3})?"
        r"(?:[ \t]?(?:mmhg|bpm|%|°c|°f))?|\b\d{2,3}/\d{2,3}[ \t]?mmhg|血压\d{2,3}/\d{2,3}|血圧\d{2,3}/\d{2,3}"
    ),
    "dose": re.compile(
        r"(?i)\b\d+(?:\.\d+)?[ \t]?(?:mg|mcg|µg|ml|iu|units?)\b"
        r"(?:[ \t](?:po|iv|im|sc|bid|tid|qd|qid|od|daily|prn))?"
    ),
    "age_sex": re.compile(
        r"(?i)\b\d{1,3}[ \t-]?(?:yo|y/o|y\.o\.|year[ -]old|jähriger?|jährige|ans|años)\b[ \t]?"
        r"(?:m|f|male|female|man|woman|patient|mann|frau|patientin|homme|femme|hombre|mujer)?"
        r"|\d{1,3}岁(?:男|女)|\d{1,3}歳(?:男|女)|\d{1,3}세[ \t]?(?:남|여)"
    ),
    "icd10": re.compile(r"\b(?:ICD-?10[: ]*)?[A-TV-Z]\d{2}\.\d{1,4}\b"),
    "course": re.compile(
        r"(?i)\b(?:presents? with|presented with|admitted (?:for|with)|started on|discontinued|"
        r"follow[- ]up in|"
        r"stable|afebrile|denies|complains of|c/o)\b|入院|出院|随访|経過観察|경과 관찰"
    ),
}
# distinctive names of public figures (a surname many people share, such as King or Jackson, is
# not one: "Mary King was fired" is a person's record)
_PUBLIC_FIGURES = (
    "lincoln jefferson roosevelt kennedy reagan nixon churchill napoleon bonaparte caesar cleopatra "
    "beethoven mozart chopin tchaikovsky schumann gogh picasso kahlo einstein darwin curie freud "
    "nietzsche hemingway tolstoy dostoevsky kafka woolf dickens shakespeare gandhi mandela hitler "
    "stalin lenin hawking galileo copernicus tesla edison musk monroe presley lennon cobain hendrix "
    "joplin michelangelo vinci goethe schiller bismarck marx engels confucius socrates plato aristotle "
    "obama trump biden clinton merkel macron putin zelensky sunak scholz modi xi jinping "
    "hanks streep dicaprio depp pitt jolie cruise spielberg tarantino hitchcock chaplin swift beyonce "
    "rihanna madonna eminem drake adele bieber gaga sinatra elvis bowie springsteen jagger mccartney "
    "federer nadal djokovic messi ronaldo maradona pele lebron "
    "bezos zuckerberg buffett dorsey nadella pichai winfrey kardashian "
    "hawking sagan feynman turing oppenheimer kahneman keynes "
    "孔子 毛泽东 孙中山 鲁迅 李白 杜甫 秦始皇 邓小平 周恩来 曹操 诸葛亮 織田信長 徳川家康 豊臣秀吉 夏目漱石 "
    "세종대왕 이순신"
)
PUBLIC_FIGURES = frozenset(_PUBLIC_FIGURES.split())
# public figures whose surname many share: only by the whole name
PUBLIC_FULL_NAMES = (
    "taylor swift", "bill gates", "steve jobs", "tim cook", "muhammad ali", "usain bolt", "michael jordan",
    "martin luther king", "tiger woods", "serena williams", "venus williams", "michael jackson",
    "whitney houston", "freddie mercury", "princess diana", "queen elizabeth", "king charles", "sam altman",
    "carl jung", "milton friedman", "kobe bryant", "elon musk", "jeff bezos", "mark zuckerberg",
)  # fmt: skip
_CJK_FIGURES = tuple(name for name in PUBLIC_FIGURES if not name.isascii())
PLACEHOLDER = re.compile(
    r"\[[^\[\]\n]{1,40}\]|\{[^{}\n]{1,40}\}|<[A-Z_ ]{2,30}>|【[^【】\n]{1,20}】|［[^［］\n]{1,20}］"
)
FICTION = re.compile(
    r"(?i)\b(?:continue the story|short story|a story|the story|novel|fiction|fictional|character|screenplay"
    r"|fan ?fic|my (?:book|novel|story)|roman|histoire|geschichte|cuento|relato|racconto|verhaal)\b"
    r"|小说|故事|虚构|角色|小説|物語|소설|이야기|рассказ|роман|قصة|رواية|कहानी|उपन्यास"
)
_LONG_WORD = re.compile(r"[A-Za-z]{5,}")
RECORD_WORDS = re.compile(
    r"(?i)\b(?:patient|employee|client|mrn|record|file|case|dob)\b|患者|员工|病历|社員|환자|직원"
)
# the (?i) patterns as run on the lowercased text (gateway/privacy/lowered.py)
_RECORD_WORDS, _FICTION, _DATE, _BIRTH_WORDS = map(case_blind, (RECORD_WORDS, FICTION, DATE, BIRTH_WORDS))
_CATEGORIES = {name: case_blind(pattern) for name, pattern in CATEGORIES.items()}
_CLINICAL_CUES = [
    (case_blind(pattern), True) if pattern.flags & re.IGNORECASE else (pattern, False)
    for pattern in CLINICAL_CUES.values()
]


def free_text_findings(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of each finding in `text` (already normalized).

    A name anchored by a relationship, role or own-name word ("my grandmother Nokuthula
    Khumalo", "patient Doe", "我表哥周文斌", "my name is ...") is personal data on its own
    (`person_name`); any other person reference needs a sensitive detail near it."""
    low = lowered(text)
    found = [("clinical_note", 0, len(text))] if _clinical(text, low) else []
    has_records = _RECORD_WORDS.search(low) is not None
    people = [
        span
        for span in person_spans(masked_placeholders(text))
        if not public_figure(text, span, has_records)
        and not company_name(text, span[0], span[1])
        and not is_dummy_name(_named(text, span))
    ]
    if _FICTION.search(low):  # invented characters: only the sender and their own people count
        people = [span for span in people if span[2] in ("relation", "first_person")]
    people = possessed(text, for_an_occasion(text, people))
    found += [("person_name", start, end) for start, end, how in people if how == "anchored"]
    found += anchored_addresses(text)
    if not people:  # no one named: the vocabularies (the costlier passes) need not run
        return found
    return found + _details_near(text, low, people)


def _details_near(text: str, low: str, people: list[tuple[int, int, str]]) -> list[tuple[str, int, int]]:
    """The sensitive details near a person, looked for only around the people (a detail farther
    than WINDOW counts for nothing, so a long prompt with one name costs a few hundred characters
    of vocabulary passes, not all of it)."""
    found = []
    for start, end in _regions(people, len(text)):
        nearby = [span for span in people if span[0] < end and span[1] > start]
        for kind, d_start, d_end in _details(text[start:end], low[start:end]):
            d_start, d_end = d_start + start, d_end + start
            if any(
                _near(d_start, d_end, p_start, p_end)
                and (how == "first_person" or not _inside(d_start, d_end, p_start, p_end))
                for p_start, p_end, how in nearby
            ):
                found.append((kind, d_start, d_end))
    return found


def _regions(people: list[tuple[int, int, str]], length: int) -> list[tuple[int, int]]:
    """The stretches of text within WINDOW (and a detail's length) of a person, merged."""
    reach = WINDOW + DETAIL_CHARS
    regions: list[tuple[int, int]] = []
    for p_start, p_end, _ in sorted(people):
        start, end = max(0, p_start - reach), min(length, p_end + reach)
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(regions[-1][1], end))
        else:
            regions.append((start, end))
    return regions


def _details(text: str, low: str) -> list[tuple[str, int, int]]:
    """`low`: `text` lowercased (gateway/privacy/lowered.py)."""
    details = [
        (f"person_{name}", m.start(), m.end())
        for name, pattern in _CATEGORIES.items()
        for m in pattern.finditer(low)
    ]
    details += _medical_words(text) + _birth_dates(low)
    return details + [("person_address", m.start(), m.end()) for m in ADDRESS.finditer(text)]


def masked_placeholders(text: str) -> str:
    """A template's placeholders ("[Employee Name]", "{first_name}", "<NAME>") blanked, in place."""
    return PLACEHOLDER.sub(lambda m: " " * len(m.group()), text)


def _medical_words(text: str) -> list[tuple[str, int, int]]:
    """Disease, ICD-10 and drug words (gateway/privacy/name_index.py's medical section)."""
    medical = name_index().medical
    return [
        ("person_health", m.start(), m.end())
        for m in _LONG_WORD.finditer(text)
        if m.group().lower() in medical
    ]


def _clinical(text: str, low: str) -> bool:
    """Three kinds of clinical cues (stops as soon as three are found, or can no longer be);
    `low`: `text` lowercased, for the case-insensitive ones."""
    found, left = 0, len(_CLINICAL_CUES)
    for pattern, on_lowered in _CLINICAL_CUES:
        left -= 1
        found += pattern.search(low if on_lowered else text) is not None
        if found >= 3:
            return True
        if found + left < 3:
            return False
    return False


def _birth_dates(low: str) -> list[tuple[str, int, int]]:
    """`low`: the text lowercased (gateway/privacy/lowered.py)."""
    words = [m.start() for m in _BIRTH_WORDS.finditer(low)]
    if not words:  # a date counts only near a birth word
        return []
    return [
        ("person_birth_date", m.start(), m.end())
        for m in _DATE.finditer(low)
        if any(abs(m.start() - at) <= 40 for at in words)
    ]


def public_figure(text: str, span: tuple[int, int, str], has_records: bool) -> bool:
    """A known public figure's name, in a text without patient, record or employee words."""
    start, end, how = span
    if how != "name":
        return False
    name = text[start:end]
    words = [word.removesuffix("'s").removesuffix("’s") for word in name.lower().split()]
    known = (
        set(words) & PUBLIC_FIGURES
        or _figure_surname(words)
        or any(full in " ".join(words) for full in PUBLIC_FULL_NAMES)
        or historical_figure(text, words)
    )
    if not (known or any(len(name) >= 2 and name in figure for figure in _CJK_FIGURES)):
        return False
    return not has_records


def _figure_surname(words: list[str]) -> bool:
    """First name and a public figure's surname ("Édith Piaf", "Ludwig van Beethoven"); not a
    double surname ("Cristian Guardiola Río": two family names, a private person's form)."""
    middle = words[1:-1]
    if len(words) < 2 or len(middle) > 1 or (middle and len(middle[0]) > 3 and not middle[0].endswith(".")):
        return False
    return words[-1] in name_index().figures


def _named(text: str, span: tuple[int, int, str]) -> str:
    """The name of a person span, without the field label or role word before it."""
    written = text[span[0] : span[1]]
    return written.rsplit(":", 1)[-1].strip(" \t'\"") if span[2] == "anchored" else written


def _near(start: int, end: int, p_start: int, p_end: int) -> bool:
    return start - p_end <= WINDOW and p_start - end <= WINDOW


def _inside(start: int, end: int, p_start: int, p_end: int) -> bool:
    """A detail word inside the name itself ("Mr King" is no identity detail); inside a
    first-person phrase it counts ("me diagnosticaron", "мне поставили диагноз")."""
    return p_start <= start and end <= p_end

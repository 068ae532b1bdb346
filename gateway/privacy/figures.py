"""A well-known person of the past named in a question about their life: a first name and a
surname that the world writes about, in a text that asks about a biography, history or works.

No packaged list of notable people installs offline with its data (PyPI has Wikidata clients,
which download at run time), so the surname rule of name_index.py's `figures` section is widened
where the text itself is about a life: a known first name (name_index's `first` or `ordinary`
section: "Ada", "Giacomo") and a surname that is a word of zipf >= SPREAD_ZIPF in at least
SPREAD_LANGUAGES of wordfreq's Latin-script languages (Lovelace 12, Leopardi 6; a private
person's, Okafor, Halvorsen, Zieliński, Stojanović, 1 or 2), beside a biography or history cue
(BIOGRAPHY, 13 languages). The caller keeps records, patients, relations and first-person texts
private whatever the name.
"""

import functools
import re

from gateway.privacy.names import name_index

SPREAD_ZIPF, SPREAD_LANGUAGES = 2.0, 5
LANGUAGES = (
    "en",
    "de",
    "fr",
    "es",
    "it",
    "nl",
    "pt",
    "sv",
    "pl",
    "cs",
    "fi",
    "ro",
    "tr",
    "ca",
    "hu",
    "da",
    "nb",
)
BIOGRAPHY = re.compile(
    r"(?i)\b(?:bio|biography|biographer|historian|historical figure|in history|poet|poetry|poems?|composer"
    r"|painter|novelist|mathematician|philosopher|physicist|chemist|inventor|emperor|empress|pharaoh"
    r"|centur(?:y|ies)|famous|legacy|biografie|dichter|gedichte?|komponist|maler|schriftsteller"
    r"|jahrhunderts?|berühmte?[rn]?|biographie|poète|poésie|compositeur|peintre|écrivain|siècle|célèbre"
    r"|biografía|poeta|poesía|compositor|pintor|escritor|siglo|famos[oa]|biografia|poesia|compositore"
    r"|pittore|scrittore|secolo|dichteres|componist|schilder|schrijver|eeuw|beroemde?|história|século"
    r"|биография|поэт|поэзия|композитор|художник|писатель|века?"
    r"|tribute|hommage|homenaje|homenagem|omaggio|huldeblijk|essay|exposé|referat|dissertation|rédaction"
    r"|redacción|tesina|эссе|реферат"
    # a life told in the past: what someone died of or suffered from (a history question's verbs)
    r"|died of|die of|death of|suffered from|starb|gestorben|litt an|est mort|mourut|souffrait|murió"
    r"|sufría|padeció|morreu|sofria|morì|soffriva|overleed|leed aan|умер|скончал|болел|страдал)\b"
    r"|传记|傳記|诗人|詩人|作曲家|画家|畫家|作家|世纪|世紀|著名|伝記|有名|전기|시인|작곡가|화가|작가|세기|유명"
    r"|जीवनी|इतिहास|कवि|संगीतकार|चित्रकार|लेखक|सदी|प्रसिद्ध|سيرة|شاعر|ملحن|رسام|كاتب|قرن|مشهور"
    r"|纪念|作文|निबंध|مقال|توفي|وفاة|أصاب|عانى|मृत्यु|निधन"
)
# the language whose word list says how widely a surname in another script is written
SCRIPT_LANGUAGES = (("\u0400", "\u04ff", "ru"), ("\u0600", "\u06ff", "ar"), ("\u0900", "\u097f", "hi"))
SCRIPT_ZIPF = 3.0


def historical_figure(text: str, words: list[str]) -> bool:
    """`words` (casefolded, a name's) are a known first name and a widely written surname, and
    the text asks about a life (see above)."""
    if len(words) < 2 or not _about_a_life(text):
        return False
    index = name_index()  # "Ada Lovelace", "Edgar Allan Poe", "Gabriel García Márquez"
    if not any(first in index.first or first in index.ordinary for first in words[:-1]):
        return False
    return any(_spread(last) for last in words[1:])


@functools.lru_cache(maxsize=16)  # once per text, not once per name in it (a text of many names)
def _about_a_life(text: str) -> bool:
    return BIOGRAPHY.search(text) is not None


@functools.lru_cache(maxsize=1024)
def _spread(word: str) -> bool:
    """Written widely: zipf >= SPREAD_ZIPF in SPREAD_LANGUAGES Latin-script languages, or, in
    another script, zipf >= SCRIPT_ZIPF in that script's language and not a common name there
    ("чайковский")."""
    from wordfreq import zipf_frequency

    for low, high, language in SCRIPT_LANGUAGES:
        if low <= word[:1] <= high:  # a common name is frequent too ("كريم", "иванов"): not one
            return zipf_frequency(word, language) >= SCRIPT_ZIPF and not name_index().is_any_name(word)
    found = 0
    for language in LANGUAGES:
        found += zipf_frequency(word, language) >= SPREAD_ZIPF
        if found >= SPREAD_LANGUAGES:
            return True
    return False

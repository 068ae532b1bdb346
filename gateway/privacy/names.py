"""Where a text names a person: Faker's per-locale name lists (a maintained package, installed
from the package index) as gazetteers, and the words people put around names in each language
(honorifics, roles, Japanese and Korean name suffixes). `person_spans` returns where they are.

Latin script: a known first name followed by a capitalized word ("Jane Doe"), a capitalized word
after an honorific or a role ("Mr Okafor", "Patient Doe", "Frau Schmidt"), "Doe, Jane".
Chinese: a surname from the list with a given name from the list, or 2-3 Han characters next
to a title or a role (张伟先生, 患者李娜). Japanese: a surname from the list, or kanji/kana before
さん, 様, 氏 (山田太郎さん). Korean: a surname with a given name from the list, or 2-4 Hangul
syllables before 씨, 님, 환자 (김철수 씨). First-person disclosure ("I was diagnosed", "我被诊断")
counts as a person too: the sender is someone.
"""

import functools
import importlib
import re

from gateway.privacy.first_person import FIRST_PERSON
from gateway.privacy.name_index import NameIndex, load_name_index
from gateway.privacy.script_names import anchored_names, script_names

LATIN_LOCALES = (
    "en_US", "en_GB", "en_IN", "de_DE", "fr_FR", "es_ES", "es_MX", "it_IT", "pt_BR", "nl_NL", "pl_PL",
    "sv_SE", "da_DK", "fi_FI", "cs_CZ", "tr_TR", "id_ID", "ro_RO", "en_IE", "en_NG", "en_KE", "pt_PT",
    "de_AT", "fr_CA", "es_AR", "es_CO", "vi_VN", "en_NZ", "no_NO", "hu_HU",
)  # fmt: skip
# locales whose names are written in another script (Cyrillic, Greek, Arabic, Hebrew, Devanagari, ...)
SCRIPT_LOCALES = (
    "ru_RU", "uk_UA", "bg_BG", "mk_MK", "el_GR", "ar_AA", "ar_SA", "ar_PS", "ar_DZ", "fa_IR", "he_IL",
    "hi_IN", "mr_IN", "ne_NP", "bn_BD", "gu_IN", "ta_IN", "th_TH", "hy_AM", "ka_GE",
)  # fmt: skip
# first names that are ordinary words at a sentence start: never a name on their own
_COMMON_WORDS = (
    "may june april august will mark bill grace hope faith rose jack page dean frank joy art sky "
    "summer autumn winter rich chase hunter cash major chance guy rusty sunny dawn eve ivy lily "
    "iris ruby pearl amber crystal storm river lane brook glen dale forest the an and in on at "
    "de la le del van von man max sage star angel chef miles paris china india york king queen "
    "prince princess pope saint doctor patient"
)
COMMON_WORDS = frozenset(_COMMON_WORDS.split())
HONORIFIC = (
    r"(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof|Sir|Dame|Herr|Frau|Hr|Fr|M|Mme|Mlle|Me|Sr|Sra|Srta|Dña|Doña|Don|Dona|Sig"
    r"|Sig\.ra|Dhr|Mevr|Mw|dhr|mevr|mw|Patiënt|Patiënte|Cliënt|Cliënte|Pz|Paz"
    r"|Meneer|Mevrouw|Signora|Signor|Sig\.a|Dott|Dott\.ssa|Avv|Sr\.a"
    r"|Patient|Patientin|Patiente|Paciente|Employee|Mitarbeiter|Mitarbeiterin|Client|Customer|Applicant"
    r"|Candidate|Kunde|Kundin|Bewerber|Bewerberin|Employé|Employée|Salarié|Salariée|Empleado|Empleada"
    r"|Cliente|Candidato|Candidata|Tenant|Resident|Student|Inmate|Member|Claimant|Insured|Versicherte[rn]?)"
)
# Latin Extended-A (ć, ł, ş, ő, ž: "Stojanović", "Wałęsa") holds capitals and small letters alike
_CAPITALIZED = r"[A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž'’]+(?:-[A-ZÀ-ÖØ-Þa-zß-öø-ÿĀ-ž][a-zß-öø-ÿā-ž'’]+){0,3}"
_TITLED = re.compile(rf"\b{HONORIFIC}\.?[ \t]{{1,3}}(?:{_CAPITALIZED}[ \t]{{1,3}}){{0,2}}{_CAPITALIZED}")
_ROLE_LOWER = re.compile(
    r"(?i:\b(?:patient|employee|client|customer|applicant|candidate|tenant|the insured|member|"
    r"patientin|mitarbeiter(?:in)?|kund(?:e|in)|bewerber(?:in)?|employée?|salariée?|paciente|emplead[oa]))"
    rf"[ \t:,]{{1,3}}{_CAPITALIZED}"
)
_PARTICLE = (
    r"(?:de|del|de la|de los|da|das|do|dos|di|du|van|van der|van den|von|von der|le|la|bin|al|ten|ter)"
)
# a form's name field: "Name: ...", "姓名：...", "이름: ..."
_NAME_LABEL = re.compile(  # a field of its own: at a line start or after a separator, not "File name:"
    r"(?im:(?:^|[,;|(\t]|[.:] )[ \t]*(?:full name|patient name|name of patient|name|nom|nombre|nome|vorname"
    r"|nachname|apellidos?|naam|имя|фио|الاسم|नाम|姓名|氏名|名前|이름"
    r"|성명)[ \t]*[:：—–-][ \t]*[^\s:：,，]{2,40})"
)
_WORDS = re.compile(
    rf"{_CAPITALIZED}(?:[ \t]{{1,3}}(?:{_PARTICLE}[ \t]{{1,3}}|[A-Z]\.[ \t]{{1,3}})?{_CAPITALIZED}){{1,3}}"
)
_AGED = re.compile(rf"\b({_CAPITALIZED})[ \t]?[(（]\d{{1,2}}[)）]")
_REVERSED = re.compile(rf"\b({_CAPITALIZED}),[ \t]{{1,2}}({_CAPITALIZED})\b")
_HAN = "[\u4e00-\u9fff]"
_ZH_TITLE = re.compile(
    rf"{_HAN}{{2,3}}(?:先生|女士|小姐|同学|同學|老师|老師|医生|醫生|护士|经理|經理|阿姨|师傅)"
)
_ZH_ROLE = re.compile(
    rf"(?:患者|病人|员工|員工|职员|職員|客户|客戶|申请人|雇员|租户|学生|乘客)[:：\s]?{_HAN}{{2,3}}"
)
_JA_SUFFIX = re.compile(r"[\u4e00-\u9fff\u3040-\u30ff]{2,6}(?:さん|様|さま|氏|くん|君|ちゃん|先生|殿)")
_KO_SUFFIX = re.compile(
    r"[\uac00-\ud7a3]{2,4}[ ]?(?:씨|님|환자|선생님|직원|고객|군|양|과장|부장|대리|팀장|차장|사원|주임)"
    r"(?![\uac00-\ud7a3])"
)
# Hindi and Arabic honorifics before a name
_SCRIPT_TITLED = re.compile(
    r"(?:श्रीमती|श्री|सुश्री|डॉ\.?|السيدة|السيد|الدكتور)[ \t]{1,2}[\u0900-\u097f\u0600-\u06ff]{2,}"
)


@functools.cache
def gazetteers() -> dict[str, frozenset[str]]:
    """Name lists by kind, loaded once (ImportError if Faker is missing: the stage is then off
    and `auto` requests are private)."""
    latin_first, latin_last = set(), set()
    for locale in LATIN_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        latin_first.update(n.lower() for n in getattr(provider, "first_names", ()))
        latin_last.update(n.lower() for n in getattr(provider, "last_names", ()))
    provider = {
        c: importlib.import_module(f"faker.providers.person.{c}").Provider
        for c in ("zh_CN", "zh_TW", "ja_JP", "ko_KR")
    }
    zh_given = {c for p in ("zh_CN", "zh_TW") for name in provider[p].first_names for c in name}
    script_names = set()
    for locale in SCRIPT_LOCALES:
        script = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for kind in ("first_names", "first_names_male", "first_names_female", "last_names"):
            script_names.update(name.casefold() for name in getattr(script, kind, ()) if " " not in name)
    return {
        "latin_first": frozenset(latin_first - COMMON_WORDS),
        "latin_last": frozenset(latin_last - COMMON_WORDS),
        "zh_surname": frozenset(n for p in ("zh_CN", "zh_TW") for n in provider[p].last_names),
        "zh_given_char": frozenset(zh_given),
        "ja_surname": frozenset(provider["ja_JP"].last_names),
        "ko_surname": frozenset(provider["ko_KR"].last_names),
        "ko_given": frozenset(provider["ko_KR"].first_names),
        "script_names": frozenset(script_names),
    }


@functools.cache
def name_index() -> NameIndex:
    """names-dataset's names in every script, public figures and medical words (loaded once)."""
    return load_name_index()


def person_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, how) of every person reference found; how is "anchored" for a name after a
    relationship, role or own-name word (a named person of the sender's life or records),
    "relation" and "first_person" for a person without a name, "title" and "name" otherwise."""
    names, index = gazetteers(), name_index()
    spans = [
        (m.start(), m.end(), "title")
        for pattern in (_TITLED, _ROLE_LOWER, _NAME_LABEL, _SCRIPT_TITLED)
        for m in pattern.finditer(text)
    ]
    spans += [(m.start(), m.end(), "first_person") for m in FIRST_PERSON.finditer(text)]
    spans += anchored_names(text, names, index)
    for match in _WORDS.finditer(text):
        if _latin_name(match.group(), names, index):
            spans.append((match.start(), match.end(), "name"))
    spans += script_names(text, names, index)
    for match in _REVERSED.finditer(text):
        if match.group(1).lower() in names["latin_last"] and match.group(2).lower() in names["latin_first"]:
            spans.append((match.start(), match.end(), "name"))
    for match in _AGED.finditer(text):  # "Martín (32)": a known first name with an age
        if match.group(1).casefold() in names["latin_first"] or index.is_any_name(match.group(1)):
            spans.append((match.start(), match.end(), "title"))
    if not text.isascii():
        spans += _cjk_spans(text, names, index)
    return spans


def _latin_name(written: str, names: dict[str, frozenset[str]], index: NameIndex) -> bool:
    """A known first name first, a known surname after it, or a double-barrelled surname."""
    words = [word for word in written.split() if word[0].isupper()]
    if not words:  # "številka občana": Latin Extended-A's small letters open a match too
        return False
    surnames = {part.lower() for word in words[1:] for part in word.split("-")}
    double_barrelled = any(
        "-" in word and all(part[:1].isupper() for part in word.split("-")) for word in words
    )
    return (
        words[0].lower() in names["latin_first"]
        or words[0].casefold() in index.first
        or bool(surnames & names["latin_last"])
        or bool(surnames & index.last)
        or double_barrelled
    )


def _cjk_spans(text: str, names: dict[str, frozenset[str]], index: NameIndex) -> list[tuple[int, int, str]]:
    patterns = (_ZH_TITLE, _ZH_ROLE, _JA_SUFFIX, _KO_SUFFIX)
    zh_surname, zh_given, ko_surname = names["zh_surname"], names["zh_given_char"], names["ko_surname"]
    spans = [
        (m.start(), m.end(), "title")
        for pattern in patterns
        for m in pattern.finditer(text)
        if pattern is not _ZH_ROLE or _zh_surname_after_role(m.group(), zh_surname)
    ]
    for match in _surname_chars(zh_surname, ko_surname).finditer(text):  # not every character
        i, char = match.start(), match.group()
        if char in zh_surname and text[i + 1 : i + 2] in zh_given and not _in_han_word(text, i, index):
            spans.append((i, i + 3 if text[i + 2 : i + 3] in zh_given else i + 2, "name"))
        elif char in ko_surname and text[i + 1 : i + 3] in names["ko_given"]:
            spans.append((i, i + 3, "name"))
    for surname in names["ja_surname"]:
        start = text.find(surname)
        while start != -1:
            spans.append((start, start + len(surname), "name"))
            start = text.find(surname, start + 1)
    return spans


def _zh_surname_after_role(written: str, zh_surname: frozenset[str]) -> bool:
    """ "患者李娜": a surname after the role word; not "患者能不能" (can patients ...)."""
    name = written.lstrip("患者病人员工員職客户戶申请雇租学生乘:： \t")
    return name[:1] in zh_surname or name[:2] in zh_surname


@functools.cache
def _surname_chars(zh_surname: frozenset[str], ko_surname: frozenset[str]) -> re.Pattern:
    """One character class of the one-character Chinese and Korean surnames (the loop above
    looks only where one occurs: a compound surname never equals one character)."""
    chars = sorted(name for name in zh_surname | ko_surname if len(name) == 1)
    return re.compile("[" + "".join(re.escape(char) for char in chars) + "]")


def _in_han_word(text: str, at: int, index: NameIndex) -> bool:
    """The surname character at `at` starts a frequent word, or its given name is one ("全国"
    whole country, "和信用卡" and credit card, "子女" children)."""
    return text[at : at + 2] in index.han_words or text[at + 1 : at + 3] in index.han_words

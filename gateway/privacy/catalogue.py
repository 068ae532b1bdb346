"""Person identifiers from python-stdnum's catalogue (about a hundred countries), found by shape
and kept by the module's own `is_valid`.

Which of stdnum's ~240 modules name a person is an explicit classification (PERSON_IDS below):
national ids, personal tax numbers, social security and health numbers, personal codes, and
bank account numbers. Everything else stdnum validates (VAT, company and trade registers,
postal codes, securities, meter points, product and receipt numbers) identifies a business or a
thing and is left out on purpose.

A candidate is a run of digit-bearing groups ("231 245 614", "756.7862.7955.34", "12.345.678-K",
"BOXW310820HNERXN09"); each run of its groups is offered to the modules whose words appear just
before it. A module's words are read from its docstring (the abbreviations before the
parenthesis and the native name after it: "SIN", "Social Insurance Number", "ИНН",
"Идентификационный номер налогоплательщика") plus the translations the table adds. Without a
word, only STRONG modules are tried: those a random string of their shape passes at most 1 in
300 times (measured by tests/gateway/test_privacy_catalogue.py); a mod-11 or Luhn number of nine
or ten digits passes 1 in 10 and always needs its word.
"""

import functools
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import gateway.privacy.checksums as checksums

# module -> words beyond its docstring's (translations, the names people use)
PERSON_IDS: dict[str, tuple[str, ...]] = {
    "ar.dni": ("documento nacional de identidad",),
    "ar.cuit": ("cuil",),
    "at.vnr": ("sozialversicherungsnummer", "sv-nr", "svnr", "sv nummer", "versicherungsnummer"),
    "au.tfn": ("tax file number",),
    "be.bis": (),
    "be.eid": ("eid", "identiteitskaart", "carte d'identité"),
    "be.nn": ("rijksregisternummer", "numéro national", "national number", "numéro de registre national"),
    "be.ssn": (),
    "bg.egn": ("егн",),
    "bg.pnf": ("лнч",),
    "br.cpf": (),
    "ca.bc_phn": ("personal health number",),
    "ca.sin": ("social insurance number", "nas", "numéro d'assurance sociale", "sin #"),
    "ch.ssn": ("ahv", "avs", "ahv-nr", "ahvn13", "numéro avs", "sozialversicherungsnummer", "no avs"),
    "cl.rut": ("run", "rol único nacional", "rol unico tributario"),
    "co.nit": ("cédula", "cedula"),
    "cr.cpf": ("cédula", "cedula"),
    "cr.cr": ("cédula de residencia",),
    "cu.ni": ("carné de identidad", "carnet de identidad"),
    "cz.rc": ("rodné číslo",),
    "de.idnr": ("steuer-id", "steueridentifikationsnummer", "tax id", "identifikationsnummer"),
    "de.stnr": ("steuernummer",),
    "dk.cpr": ("cpr-nummer", "personnummer"),
    "do.cedula": ("cédula",),
    "ec.ci": ("cédula", "cedula"),
    "ee.ik": ("isikukood", "personal code"),
    "es.dni": ("dni",),
    "es.nie": ("nie",),
    "es.nif": ("nif",),
    "fi.hetu": ("henkilötunnus",),
    "fi.veronumero": (),
    "fr.nif": ("numéro fiscal", "spi"),
    "fr.nir": ("sécurité sociale", "securite sociale", "numéro de sécu", "insee", "nss"),
    "gb.nhs": ("nhs number", "nhs no"),
    "gb.upn": ("unique pupil number",),
    "gb.utr": ("unique taxpayer reference",),
    "gr.amka": ("amka",),
    "hr.oib": ("oib",),
    "id.nik": ("nik", "ktp"),
    "ie.pps": ("ppsn", "pps number", "personal public service"),
    "il.idnr": ("teudat zehut", "תעודת זהות", "israeli id"),
    "in_.aadhaar": ("aadhar", "आधार"),
    "in_.epic": ("voter id", "epic no"),
    "in_.pan": ("pan card", "pan number", "pan no", "पैन"),
    "in_.vid": ("virtual id",),
    "is_.kennitala": ("kennitala",),
    "it.codicefiscale": ("codice fiscale", "cf"),
    "jp.in_": ("マイナンバー", "個人番号", "my number"),
    "ke.pin": ("kra pin",),
    "kr.rrn": ("주민등록번호", "주민번호"),
    "li.peid": (),
    "lt.asmens": ("asmens kodas",),
    "mu.nid": (),
    "mx.curp": ("curp",),
    "mx.rfc": ("rfc",),
    "my.nric": ("nric", "mykad", "ic number"),
    "nl.bsn": ("bsn", "burgerservicenummer", "sofinummer"),
    "nl.onderwijsnummer": (),
    "no.fodselsnummer": ("fødselsnummer", "personnummer"),
    "nz.ird": ("ird number", "ird no"),
    "pe.cui": ("dni",),
    "pk.cnic": ("cnic", "nadra"),
    "pl.pesel": ("pesel",),
    "pt.cc": ("cartão de cidadão", "cartao de cidadao"),
    "pt.nif": ("contribuinte", "número de contribuinte"),
    "ro.cnp": ("cnp", "cod numeric personal"),
    "ru.inn": ("инн", "inn"),
    "se.personnummer": ("personnummer",),
    "si.emso": ("emšo", "emso"),
    "sk.rc": ("rodné číslo",),
    "th.pin": ("เลขประจำตัวประชาชน",),
    "tr.tckimlik": ("tc kimlik", "kimlik no", "tckn"),
    "ua.rntrc": ("ІПН", "РНОКПП", "ИНН"),
    "us.atin": (),
    "us.itin": ("itin",),
    "us.ptin": (),
    "us.ssn": ("social security", "ssn", "soc sec"),
    "us.tin": ("taxpayer identification number",),
    "za.idnr": ("id number", "identity number", "south african id"),
    "za.tin": ("tax number",),
    # bank accounts with their own check digits (a person's money)
    "ar.cbu": ("cbu",),
    "cz.bankaccount": ("číslo účtu",),
    "es.ccc": ("ccc", "cuenta", "número de cuenta"),
    "no.kontonr": ("kontonummer",),
    "nz.bankaccount": ("bank account", "account number"),
}
# 1 in 300 random strings of their shape pass at most (measured): no context word needed
STRONG = frozenset({
    "be.bis", "be.nn", "ch.ssn", "cn.ric", "de.idnr", "ee.ik", "fi.hetu", "fr.nif",
    "is_.kennitala", "mx.curp", "no.fodselsnummer", "ro.cnp", "za.idnr",
    "cz.bankaccount", "nz.bankaccount",
})  # fmt: skip
# numbers stdnum does not know, checked by gateway/privacy/checksums.py: (kind, words, check)
OWN_IDS: tuple[tuple[str, tuple[str, ...], Callable[[str], bool]], ...] = (
    ("ru_snils", ("снилс", "snils", "страховой номер"), checksums.snils_valid),
    (
        "ae_emirates_id",
        ("emirates id", "الهوية الإماراتية", "رقم الهوية", "eid"),
        checksums.emirates_id_valid,
    ),
    ("mx_clabe", ("clabe",), checksums.clabe_valid),
)
NOT_SPACED_SCRIPTS = 0x0E00  # Thai, CJK, kana, Hangul: words without spaces around them
_EXAMPLE = re.compile(r">>> (?:validate|compact|format|is_valid)\('([^']+)'\)[^\n]*\n(?!Traceback)")
_PARENTHESIS = re.compile(r"^([^(]*)\(([^,)]*)")
_SEPARATORS = re.compile(r"[ ./\-]")
_WORD_SPLIT = re.compile(r"[\s.'’:,;()\-/#№]+")


@dataclass(frozen=True, slots=True)
class PersonId:
    """One identifier the catalogue can check: its finding kind, its check, and the lengths of
    its compact form in the module's own valid examples (the shape the STRONG path tries)."""

    kind: str
    is_valid: Callable[[str], bool]
    lengths: frozenset[int]
    is_strong: bool


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Built once: word (folded, split on separators, words joined by one space) -> the ids it
    names; compact length -> the STRONG ids of that length."""

    word_to_ids: dict[str, tuple[PersonId, ...]]
    unspaced_word_to_ids: tuple[tuple[str, tuple[PersonId, ...]], ...]  # Thai, CJK: substrings
    length_to_strong: dict[int, tuple[PersonId, ...]]
    first_word_to_sizes: dict[str, tuple[int, ...]]  # the word counts of the phrases it begins
    label_to_ids: dict[str, tuple[PersonId, ...]]  # two capitals, named only as "NN:" (a label)


def fold(text: str) -> str:
    return " ".join(word for word in _WORD_SPLIT.split(text.casefold()) if word)


def _checker(module) -> Callable[[str], bool]:
    def is_valid(number: str) -> bool:
        try:
            return bool(module.is_valid(number))
        except Exception:  # a few modules raise on odd input (cn.ric on an unknown county)
            return False

    return is_valid


def docstring_words(doc: str) -> tuple[str, ...]:
    """'SIN (Canadian Social Insurance Number).' -> ('SIN',); 'ИНН (Идентификационный номер
    налогоплательщика, Russian tax identifier).' -> ('ИНН', 'Идентификационный номер ...').
    Abbreviations of two letters ("CC", "NI") name too many other things and are dropped."""
    match = _PARENTHESIS.match(doc.strip().splitlines()[0] if doc.strip() else "")
    if match is None:
        return ()
    abbreviations = [a.strip() for a in re.split(r",| or ", match.group(1)) if len(a.strip()) > 2]
    native = match.group(2).strip()
    return (*abbreviations, native) if " " in native else tuple(abbreviations)


def short_labels(doc: str) -> tuple[str, ...]:
    """'NN, NISS, RRN (Belgian national number).' -> ('NN',): the two-letter abbreviations
    docstring_words drops, kept for the label form "NN: 85.07.30-033 28"."""
    match = _PARENTHESIS.match(doc.strip().splitlines()[0] if doc.strip() else "")
    if match is None:
        return ()
    return tuple(a.strip() for a in re.split(r",| or ", match.group(1)) if len(a.strip()) == 2)


def _person_id(name: str) -> tuple[PersonId, tuple[str, ...]]:
    module = importlib.import_module(f"stdnum.{name}")
    is_valid = _checker(module)
    examples = [e for e in _EXAMPLE.findall(module.__doc__ or "") if is_valid(e)]
    lengths = frozenset(len(_SEPARATORS.sub("", module.compact(e))) for e in examples)
    kind = name.replace(".", "_").replace("__", "_")
    words = (*docstring_words(module.__doc__ or ""), *PERSON_IDS[name])
    labels = tuple(f"label:{label}" for label in short_labels(module.__doc__ or ""))
    return PersonId(kind, is_valid, lengths, name in STRONG), (*words, *labels)


@functools.cache
def catalogue() -> Catalogue:
    word_to_ids: dict[str, list[PersonId]] = {}
    length_to_strong: dict[int, list[PersonId]] = {}
    entries = [_person_id(name) for name in PERSON_IDS]
    entries += [(PersonId(kind, check, frozenset(), False), words) for kind, words, check in OWN_IDS]
    for person_id, words in entries:
        for word in words:
            key = word if word.startswith("label:") else fold(word)
            word_to_ids.setdefault(key, []).append(person_id)
        if person_id.is_strong:
            for length in person_id.lengths:
                length_to_strong.setdefault(length, []).append(person_id)
    labels = {word[6:]: tuple(ids) for word, ids in word_to_ids.items() if word.startswith("label:")}
    words = {word: tuple(ids) for word, ids in word_to_ids.items() if word and not word.startswith("label:")}
    return Catalogue(
        words,
        tuple((word, ids) for word, ids in words.items() if ord(word[0]) >= NOT_SPACED_SCRIPTS),
        {length: tuple(ids) for length, ids in length_to_strong.items()},
        _first_word_to_sizes(words),
        labels,
    )


def _first_word_to_sizes(words: dict[str, tuple[PersonId, ...]]) -> dict[str, tuple[int, ...]]:
    sizes: dict[str, set[int]] = {}
    for word in words:
        parts = word.split()
        sizes.setdefault(parts[0], set()).add(len(parts))
    return {first: tuple(sorted(counts)) for first, counts in sizes.items()}

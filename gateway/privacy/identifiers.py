"""National identifiers with check digits (python-stdnum's validators), passports, MAC addresses
and medical record numbers: each a linear pattern, then a validator or a context word."""

import re

from stdnum.br import cnpj, cpf
from stdnum.fr import nir
from stdnum.jp import in_ as my_number
from stdnum.kr import rrn

from gateway.privacy.validators import only_digits

CONTEXT_WINDOW = 48


def valid_with(module):
    """The module's check, on a number of more than one digit (111.111.111-11 is a placeholder)."""
    return lambda match: (
        len(set(only_digits(match.group()))) > 1 and module.is_valid(only_digits(match.group()))
    )


RRN_WORDS = re.compile(r"(?i)주민등록번호|주민번호|주민등록|resident registration|\brrn\b")


def kr_rrn(match: re.Match) -> bool:
    """Resident registration number: birth date, sex/century digit and check digit (stdnum);
    numbers issued since October 2020 have no check digit, so after "주민등록번호" a real birth
    date and sex digit are enough."""
    number = only_digits(match.group())
    if rrn.is_valid(number):
        return True
    before = match.string[max(0, match.start() - CONTEXT_WINDOW) : match.start()]
    month, day = int(number[2:4]), int(number[4:6])
    return 1 <= month <= 12 and 1 <= day <= 31 and RRN_WORDS.search(before) is not None


def fr_nir(match: re.Match) -> bool:
    compact = re.sub(r"[ .]", "", match.group()).upper()
    return nir.is_valid(compact)


MY_NUMBER_WORDS = re.compile(r"(?i)マイナンバー|個人番号|my ?number|個人番号カード")


def jp_my_number(match: re.Match) -> bool:
    """12 digits with a check digit, and "マイナンバー"/"個人番号" before it (1 in 11 random
    12-digit numbers pass the check alone)."""
    before = match.string[max(0, match.start() - CONTEXT_WINDOW) : match.start()]
    return my_number.is_valid(only_digits(match.group())) and MY_NUMBER_WORDS.search(before) is not None


def mac_address(match: re.Match) -> bool:
    compact = re.sub(r"[:.\-]", "", match.group()).lower()
    return compact not in ("000000000000", "ffffffffffff")


PASSPORT = re.compile(
    r"(?i:passport|passeport|reisepass|pasaporte|passaporto|护照|護照|旅券|パスポート|여권)"
    r"(?i:[ \t]?(?:no\.?|number|nr\.?|nummer|numéro|número|号码|番号|번호|#))?[ \t:：#-]{0,4}"
    r"(?P<number>[A-Za-z]?\d{8,9})(?![A-Za-z0-9])"
)
MEDICAL_RECORD = re.compile(
    r"(?i:\bMRN\b|medical record(?: number| no\.?| #)?|patient (?:id|number|no\.?)|chart (?:number|no\.?)"
    r"|patienten-?(?:nummer|id)|fallnummer|dossier (?:médical|patient)|n° de dossier|historia clínica"
    r"|número de historia|病历号|病歷號|住院号|病案号|カルテ番号|患者番号|診察券番号"
    r"|의무기록번호|환자번호|병록번호|pat\.? ?nr\.?|patiëntnummer|patientnummer|n° (?:de )?patient"
    r"|numéro de patient|número de paciente|n[úu]mero de prontuário|prontuário|cartella clinica"
    r"|номер (?:медицинской )?карты|медицинская карта|रोगी संख्या|मरीज़? (?:आईडी|संख्या)"
    r"|رقم الملف(?: الطبي)?|رقم المريض|病人编号|患者id|診療録番号|カルテno)"
    r"[ \t]{0,3}[:#№：]?[ \t]{0,3}[A-Za-z]{0,3}-?(?P<number>\d{4,12})(?!\d)"
)
# a literal of each word of the patterns above, casefolded: what any match holds (their gates)
PASSPORT_LITERALS = ("pass", "pasaporte", "护照", "護照", "旅券", "パスポート", "여권")
MEDICAL_RECORD_LITERALS = (
    "mrn", "medical record", "patient", "chart", "fallnummer", "dossier", "historia", "病历号",
    "病歷號", "住院号", "病案号", "カルテ番号", "患者番号", "診察券番号", "의무기록번호", "환자번호",
    "병록번호", "pat", "patiënt", "paciente", "prontuário", "cartella", "карт", "रोगी", "मरीज", "الملف",
    "المريض", "病人编号", "患者id", "診療録番号", "カルテno",
)  # fmt: skip

PATTERNS = [  # (kind, pattern, validator)
    ("kr_rrn", re.compile(r"(?<![\d-])\d{6}[ \-]?[1-8]\d{6}(?!\d)"), kr_rrn),
    ("jp_my_number", re.compile(r"(?<![\d-])\d{4}[ \-]?\d{4}[ \-]?\d{4}(?![\d-])"), jp_my_number),
    ("br_cpf", re.compile(r"(?<![\d./-])\d{3}\.?\d{3}\.?\d{3}[-/]?\d{2}(?![\d./-])"), valid_with(cpf)),
    ("br_cnpj", re.compile(r"(?<![\d./-])\d{2}\.?\d{3}\.?\d{3}/?\d{4}-?\d{2}(?![\d./-])"), valid_with(cnpj)),
    (
        "fr_nir",
        re.compile(
            r"(?<![\dA-Za-z])[12378][ .]?\d{2}[ .]?\d{2}[ .]?(?:\d{2}|2[ABab])"
            r"[ .]?\d{3}[ .]?\d{3}[ .]?\d{2}(?!\d)"
        ),
        fr_nir,
    ),
    (
        "mac_address",
        re.compile(
            r"(?<![0-9A-Fa-f])(?<![0-9A-Fa-f][:\-])[0-9A-Fa-f]{2}([:\-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}"
            r"(?![0-9A-Fa-f]|[:\-][0-9A-Fa-f])"
            r"|(?<![0-9A-Fa-f.])[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?![0-9A-Fa-f.])"
        ),
        mac_address,
    ),
    ("passport", PASSPORT, lambda match: True),
    ("medical_record_number", MEDICAL_RECORD, lambda match: len(set(match.group("number"))) > 1),
]

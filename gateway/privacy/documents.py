"""Travel documents and vehicles: passport numbers after a passport word in the 13 languages,
ICAO 9303 machine-readable zones (TD1, TD2, TD3, by their check digits), and licence plates of
those languages' countries after a plate word. Each a linear pattern and a check."""

import re

from gateway.privacy.checksums import icao_check_digit

PASSPORT_WORDS = (
    r"passport|passeport|reisepass|pass(?:nummer|nr)|pasaporte|passaporto|passaporte|paspoort"
    r"|паспорт|पासपोर्ट|جواز السفر|جواز سفر|护照|護照|旅券|パスポート|여권"
)
PASSPORT = re.compile(
    rf"(?i:{PASSPORT_WORDS})"
    r"[^\n\d]{0,24}?"  # "number", "n°", "no. is", "番号は", "серия 45 09" is read as digits below
    r"(?<![A-Za-z0-9])(?P<number>\d{2}[ ]?\d{2}(?:[ ]?(?:№|номер|n°|no\.?)?[ ]?)\d{6}|[A-Z0-9]{6,9})"
    r"(?![A-Za-z0-9])"
)
# TD3 line 2 (passports): number, check, nationality, birth, check, sex, expiry, check, ...
MRZ_TD3 = re.compile(
    r"(?<![A-Z0-9<])[A-Z0-9<]{9}\d[A-Z<]{3}\d{6}\d[MFX<]\d{6}\d[A-Z0-9<]{14}[\d<]\d(?![A-Z0-9<])"
)
MRZ_TD2 = re.compile(r"(?<![A-Z0-9<])[A-Z0-9<]{9}\d[A-Z<]{3}\d{6}\d[MFX<]\d{6}\d[A-Z0-9<]{7}\d(?![A-Z0-9<])")
MRZ_TD1 = re.compile(r"(?<![A-Z0-9<])\d{6}\d[MFX<]\d{6}\d[A-Z<]{3}[A-Z0-9<]{11}\d(?![A-Z0-9<])")
# the name line: document code, issuing state, surname << given names, filled with <
MRZ_NAME = re.compile(r"(?<![A-Z0-9<])[PIACV][A-Z<][A-Z<]{3}[A-Z]{1,39}<<[A-Z<]{2,39}(?![A-Z0-9<])")


def passport(match: re.Match) -> bool:
    """Letters and digits (a word is not a number): three digits at least."""
    return sum(c.isdigit() for c in match.group("number")) >= 3


def _checked(field: str, check: str) -> bool:
    return check.isdigit() and icao_check_digit(field.replace("<", "0")) == int(check)


def mrz_line(match: re.Match) -> bool:
    """The birth and expiry dates' check digits (and the document number's, where the line holds
    it) are right: a random line passes 1 in 1000."""
    line = match.group()
    if match.re is MRZ_TD1:
        return _checked(line[0:6], line[6]) and _checked(line[8:14], line[14])
    number, birth, expiry = (line[0:9], line[9]), (line[13:19], line[19]), (line[21:27], line[27])
    return _checked(*number) and _checked(*birth) and _checked(*expiry)


def mrz_name(match: re.Match) -> bool:
    return len(match.group()) in (30, 36, 44)


PLATE_WORDS = (
    r"licen[cs]e plate|number plate|plate number|registration (?:number|plate)|tag number|plate"
    r"|kennzeichen|nummernschild|immatriculation|plaque|matrícula|matricula|patente|targa"
    r"|placa(?! (?:de )?(?:v[ií]deo|base|madre|m[aã]e|gr[aá]fica|solar|rede|som|red))"
    r"|kenteken|госномер|гос\. ?номер|номерной знак|номер(?:ом)? машины|автомобиль с номером"
    r"|गाड़ी नंबर|नंबर प्लेट|رقم اللوحة|لوحة|لوحت|车牌|車牌|牌照|ナンバー|번호판|차량번호"
    r"|(?<![A-Za-z])(?:car|vehicle|coche|vehículo|voiture|véhicule|wagen|fahrzeug|macchina|carro|veículo"
    r"|auto|automobile|машина|автомобиль|汽车|車両|자동차|차량)(?![A-Za-z])"
)
_CYR = "АВЕКМНОРСТУХABEKMHOPCTYX"
PLATE_FORMATS = (
    r"[A-ZÄÖÜ]{1,3}[- ][A-Z]{1,2}[ ]?\d{1,4}[EH]?"  # DE, AT
    r"|[A-Z]{2}[- ]?\d{3}[- ]?[A-Z]{2}"  # FR SIV, IT
    r"|\d{4}[ -]?[BCDFGHJKLMNPRSTVWXYZ]{3}"  # ES
    r"|[A-Z]{2}\d{2}[ ]?[A-Z]{3}"  # UK
    r"|[A-Z]{3}[- ]?\d[A-Z0-9]\d{2}"  # BR (and Mercosur)
    r"|[A-Z]{2}-\d{2}-[A-Z]{2}|\d{2}-[A-Z]{2}-\d{2}|\d{2}-\d{2}-[A-Z]{2}|[A-Z]{2}-\d{2}-\d{2}"  # PT
    r"|[A-Z0-9]{1,3}-[A-Z0-9]{2,3}-[A-Z0-9]{1,2}"  # NL sidecodes
    r"|[A-Z]{2}[ -]?\d{1,2}[ -]?[A-Z]{1,3}[ -]?\d{4}"  # IN
    r"|[A-Z]{3}[- ]?\d{3,4}|\d[A-Z]{3}\d{3}|[A-Z0-9]{2,3}[- ]\d{3,4}"  # US, CA, AU, MX
    r"|[A-Z]{2}[ ]?\d{3,6}"  # CH
    rf"|[{_CYR}][ ]?\d{{3}}[ ]?[{_CYR}]{{2}}[ ]?\d{{2,3}}"  # RU
    r"|[京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼][A-Z][·•・ ]?[A-Z0-9]{5,6}"  # CN
    r"|[\u4e00-\u9fff]{1,4}[ ]?\d{2,3}[ ]?[\u3040-\u309f][ ]?\d{1,2}-\d{2}"  # JP
    r"|\d{2,3}[ ]?[\uac00-\ud7a3][ ]?\d{4}"  # KR
    r"|\d{1,5}[ ]?[\u0621-\u064a](?:[ ]?[\u0621-\u064a]){0,2}"  # SA, AE, EG
    r"|[\u0621-\u064a](?:[ ]?[\u0621-\u064a]){0,2}[ ]?\d{1,5}"
)
PLATE = re.compile(
    rf"(?i:{PLATE_WORDS})[^\n]{{0,30}}?(?<![A-Za-z0-9-])(?P<plate>{PLATE_FORMATS})(?![A-Za-z0-9-])"
)


# forms no other number takes, found without a word: RU (Cyrillic letters of the plate alphabet,
# region code), CN (province character), IN (state code), KR (a plate's sign between its digits),
# JP (office, class, kana, number), DE (district-dash-letters-space-digits)
KR_PLATE_SIGNS = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주아바사자배하허호"
IN_STATES = (
    "AN|AP|AR|AS|BR|CG|CH|DD|DL|GA|GJ|HP|HR|JH|JK|KA|KL|LA|LD|MH|ML|MN|MP|MZ|NL|OD|OR|PB|PY|RJ|SK|TN|TR"
    "|TS|UK|UP|WB"
)
DISTINCT_PLATE = re.compile(
    r"(?<![A-Za-z0-9А-Яа-я-])(?P<plate>[АВЕКМНОРСТУХ]\d{3}[АВЕКМНОРСТУХ]{2}\d{2,3}"
    r"|[京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼][A-Z][·•・]?[A-Z0-9]{5,6}"
    rf"|(?:{IN_STATES})[ -]?\d{{1,2}}[A-Z]?[ -]?[A-Z]{{1,3}}[ -]?\d{{4}}"
    rf"|\d{{2,3}}[ ]?[{KR_PLATE_SIGNS}][ ]?\d{{4}}"  # KR: the signs plates use (가나다..., 하허호)
    r"|[\u4e00-\u9fff]{1,4}[ ]?\d{3}[ ]?[\u3040-\u309f][ ]?\d{1,2}-\d{2}"  # JP: 品川 300 あ 12-34
    r"|[A-ZÄÖÜ]{1,3}-[A-Z]{1,2}[ ]\d{1,4}[EH]?)(?![A-Za-z0-9-])"  # DE: dash, then space: B-AB 1234
)


def plate(match: re.Match) -> bool:
    """A plate has a digit, and a letter or a script's sign (a bare number is not a plate)."""
    value = match.group("plate")
    return any(c.isdigit() for c in value) and any(not c.isdigit() and c.isalnum() for c in value)


PATTERNS = [  # (kind, pattern, validator, literals one of which a match holds, folded)
    (
        "passport",
        PASSPORT,
        passport,
        ("pass", "pasap", "paspoort", "паспорт", "पासपोर्ट", "جواز", "护照", "護照", "旅券", "パスポート",
         "여권"),
    ),
    ("mrz", MRZ_TD3, mrz_line, ("<",)),
    ("mrz", MRZ_TD2, mrz_line, ("<",)),
    ("mrz", MRZ_TD1, mrz_line, ("<",)),
    ("mrz", MRZ_NAME, mrz_name, ("<<",)),
    (
        "licence_plate",
        PLATE,
        plate,
        ("plate", "registration", "tag number", "kennzeichen", "nummernschild", "immatriculation", "plaque",
         "matr", "placa", "patente", "targa", "kenteken", "номер", "नंबर", "لوحة", "车牌", "車牌", "牌照",
         "ナンバー", "번호판", "차량번호", "لوحت", "car", "vehic", "vehíc", "véhic", "coche", "voiture",
         "wagen", "fahrzeug", "macchina", "carro", "veícul", "auto", "машин", "автомобил", "汽车", "車両",
         "자동차", "차량"),
    ),
    ("licence_plate", DISTINCT_PLATE, plate, ("",)),
]  # fmt: skip

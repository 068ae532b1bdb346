"""Numbers a person-identifier word names, in the 13 languages: "His social security number is
20.123.456", "Führerscheinnummer: B072RRE2I55", "身份证号 11010519491231002X", "DOB 14/02/1998".

The check-digit recognizers (gateway/privacy/catalogue.py, identifiers.py) know a hundred
countries' numbers; people write many more (driving licences, student and insurance numbers,
the ids of countries without a published check) and a word says which. After such a word, any
number-shaped token is the person's: a run of at most eight groups, each holding a digit or being
a short capital code ("ZZ 767588 T", "GODE 561231 GR8", "35snj20905"), six letters and digits at
least, three of them digits, and not a placeholder (000-00-0000). A date after a birth-date word
is a date of birth. Linear: the words are one alternation, what follows is bounded.
"""

import re

from gateway.privacy.examples import EXAMPLE_WORDS

ID_WORDS = (
    # en
    r"social security(?: number| no\.?| #)?|social insurance number|national (?:id|identity|insurance)"
    r"(?: number| card| no\.?)?|id(?:entity)? (?:card )?(?:number|no\.?)|identity card|identification number"
    r"|personal (?:id|identity|identification|public service) (?:number|code)|personal code"
    r"|tax (?:id|identification number|file number|reference)|taxpayer id(?:entification number)?"
    r"|driver'?s'? licen[cs]e(?: number| no\.?| #)?|driving licen[cs]e(?: number| no\.?)?"
    r"|licen[cs]e (?:number|no\.?)|health (?:insurance |card )?number|insurance number|medicare number"
    r"|student (?:id|number)|pupil number|voter id|residence permit(?: number)?|citizen id"
    # de, fr, es, pt, it, nl
    r"|sozialversicherungsnummer|versicherungsnummer|versichertennummer|steuer-?id|steuernummer"
    r"|steueridentifikationsnummer|personalausweis(?:nummer)?|ausweisnummer|ausweis-nr\.?"
    r"|führerschein(?:nummer)?|identifikationsnummer|krankenversicherungsnummer"
    r"|numéro de sécurité sociale|sécurité sociale|numéro fiscal|carte d'identité|numéro d'identification"
    r"|permis de conduire|numéro national|carte vitale|numéro d'assuré"
    r"|número de (?:la )?seguridad social|seguridad social|documento (?:nacional )?de identidad|cédula"
    r"|licencia de conducir|carné de conducir|permiso de conducir|número de identificación(?: fiscal)?"
    r"|número de identificação|carteira de identidade|carteira de motorista|segurança social"
    r"|número de contribuinte|cartão de cidadão|codice fiscale|carta d'identità|patente di guida"
    r"|tessera sanitaria|numero di previdenza|burgerservicenummer|identiteitskaart(?:nummer)?"
    r"|rijbewijs(?:nummer)?|sofinummer|zorgverzekeringsnummer"
    # ru, zh, ja, ko, hi, ar
    r"|снилс|инн|номер паспорта|водительское удостоверение|водительские права|удостоверение личности"
    r"|полис омс|страховой номер|идентификационный номер|личный номер"
    r"|身份证|身份證|社会保障号|社保号|驾驶证|驾照|駕照|纳税人识别号|医保卡号|学号"
    r"|マイナンバー|個人番号|運転免許証|免許証番号|保険証番号|被保険者番号|基礎年金番号|在留カード番号|学籍番号"
    r"|주민등록번호|주민번호|운전면허|외국인등록번호|건강보험증? ?번호|학번"
    r"|आधार|पैन|मतदाता पहचान|ड्राइविंग लाइसेंस|पहचान संख्या|पहचान पत्र"
    r"|رقم الهوية|الرقم الوطني|بطاقة الهوية|رخصة القيادة|رقم الضمان الاجتماعي|الرقم القومي"
)
ID_ABBREVIATIONS = (
    r"SSN|ssn|SIN|TIN|ITIN|DNI|NIE|NIF|RFC|CURP|CPF|RG|CNH|BSN|PESEL|NHS|DL|ИНН|СНИЛС"  # NINO: validated
)
_GROUP = r"(?:(?=[A-Za-z]*\d)[A-Za-z0-9]{1,20}+|[A-Z]{1,4}+)"
# the number first (a digit within its first seven characters), then the word before it: a pass
# of the word alternation over the whole text cost 50 ms per 64 KB
LABELLED_ID = re.compile(
    r"(?<![A-Za-z0-9])(?=[A-Za-z]{0,6}[ .\-/]?\d)"
    rf"(?!(?:{ID_ABBREVIATIONS})[ .\-/:])"  # "CNH 02650306461": the number is after the word
    rf"(?P<number>{_GROUP}(?:[ .\-/]{_GROUP}){{0,7}}+)(?![A-Za-z0-9])"
)
WORD_BEFORE = re.compile(
    rf"(?:(?i:{ID_WORDS})|(?<![A-Za-z])(?:{ID_ABBREVIATIONS})(?![A-Za-z]))(?P<between>[^\d\n]{{0,24}})$"
)
WORD_WINDOW = 80  # the longest word and what may stand between it and the number
# the gate: a literal of each identifier word (casefolded), or an abbreviation as written
ID_WORD_LITERALS = (
    "social", "national ", "id number", "id no", "id card", "identity ", "identification", "personal ",
    "tax", "licen", "health", "insurance", "medicare", "student", "pupil", "voter", "residence permit",
    "citizen", "versicher", "steuer", "ausweis", "führerschein", "identifikation", "sécurité", "fiscal",
    "carte d", "permis de", "numéro national", "carte vitale", "assuré", "seguridad", "identidad",
    "cédula", "conducir", "identificación", "identificação", "carteira", "segurança", "contribuinte",
    "cidadão", "identità", "patente", "tessera sanitaria", "previdenza", "burgerservice",
    "identiteitskaart", "rijbewijs", "sofinummer", "zorgverzekering", "снилс", "инн", "паспорт",
    "водительск", "удостоверение", "полис", "страховой", "идентификацион", "личный номер", "身份",
    "社会保障", "社保", "驾", "駕", "纳税", "医保", "学号", "マイナンバー", "個人番号", "免許", "保険",
    "年金", "在留", "学籍", "주민", "운전면허", "외국인등록", "건강보험", "학번", "आधार", "पैन", "पहचान",
    "लाइसेंस", "الهوية", "الوطني", "رخصة", "الضمان", "القومي",
)  # fmt: skip
ID_ABBREVIATION_LITERALS = tuple(ID_ABBREVIATIONS.split("|"))
MIN_CHARS, MIN_DIGITS = 6, 3
# between the word and the number: it is only like one ("SSN-like", "format", "e.g.")
NOT_ONE = re.compile(
    r"(?i)like|format|shape|pattern|example|e\.g\.|such as|placeholder|fake|dummy|sample|invalid"
)


def labelled_id(match: re.Match) -> bool:
    """After an identifier word; six letters and digits, three of them digits, and not one digit
    repeated or, in an example, counted up (000-00-0000, 123456789); nothing between the word and
    the number saying it is only like one."""
    compact = re.sub(r"[ .\-/]", "", match.group("number"))
    digits = [c for c in compact if c.isdigit()]
    placeholder = _dummy_digits("".join(digits), match.string) and len(digits) >= len(compact) - 1
    if len(compact) < MIN_CHARS or len(digits) < MIN_DIGITS or placeholder:
        return False
    word = WORD_BEFORE.search(match.string, max(0, match.start() - WORD_WINDOW), match.start())
    return word is not None and NOT_ONE.search(word.group("between")) is None


def _dummy_digits(digits: str, text: str) -> bool:
    """One digit repeated (000-00-0000, "00000000X"), or counted up (123456789) in code or an
    example (gateway/privacy/examples.py): a form's or a test's filler."""
    return len(set(digits)) == 1 or (
        digits in "01234567890123456789" and EXAMPLE_WORDS.search(text) is not None
    )


BIRTH_WORDS = (
    r"date of birth|birth ?date|d\.?o\.?b\.?|born(?: on)?|geb\.|geboren(?: am)?|geburtsdatum"
    r"|née? le|date de naissance|fecha de nacimiento|nacid[oa] el|data de nascimento|nascid[oa] em"
    r"|data di nascita|nat[oa] il|geboortedatum|geboren op|дата рождения|родил(?:ся|ась)|出生日期"
    r"|出生年月日|生年月日|생년월일|जन्म ?तिथि|जन्म दिनांक|تاريخ الميلاد|تاريخ الولادة"
)
_MONTH = r"[^\W\d_]{3,12}\.?"
DATE = (
    r"\d{1,2}[./\-]\d{1,2}[./\-](?:19|20)?\d{2}|(?:19|20)\d{2}[./\-]\d{1,2}[./\-]\d{1,2}"
    rf"|\d{{1,2}}\.? (?:de )?{_MONTH}(?: de)? (?:19|20)\d{{2}}|{_MONTH} \d{{1,2}},? (?:19|20)\d{{2}}"
    r"|(?:19|20)\d{2} ?[年년] ?\d{1,2} ?[月월] ?\d{1,2} ?[日일]?"
)
DATE_OF_BIRTH = re.compile(
    rf"(?i:{BIRTH_WORDS})[ \t]{{0,3}}[:：]?[ \t]{{0,3}}(?:is |was )?(?P<date>{DATE})(?!\d)"
)
BIRTH_LITERALS = (
    "birth", "dob", "d.o.b", "born", "geb", "née", "né ", "naissance", "nacimiento", "nacid", "nascimento",
    "nascid", "nascita", "nato", "nata", "geboorte", "рожден", "родил", "出生", "生年月日", "생년월일",
    "जन्म", "الميلاد", "الولادة",
)  # fmt: skip

PATTERNS = [  # (kind, pattern, validator, literals one of which a match holds, folded)
    ("labelled_id", LABELLED_ID, labelled_id, ID_WORD_LITERALS),
    ("date_of_birth", DATE_OF_BIRTH, lambda match: True, BIRTH_LITERALS),
]

"""Whether a phone number in a text is an organisation's line: a company's, a shop's, a public
service's, printed for everyone to call (a website footer, an e-mail signature, an ad, a list of
helplines), by what surrounds it, not by the number.

The signals, each of a kind, in the paragraph around the number (up to WINDOW_BEFORE characters
before it and WINDOW_AFTER after):
- `service`: a customer-service or hotline word (phone_types.SERVICE_WORDS, 13 languages);
  decides on its own;
- `hours`: opening hours ("Mon–Fri 9am–5pm", "24/7", "Mo–Fr 8–18 Uhr", "営業時間", "평일");
- `company`: a legal form (Ltd, Inc, GmbH, S.A., SARL, S.p.A., Ltda, B.V., 株式会社, 有限公司,
  주식회사, ООО, शركة);
- `web`: a URL, a domain, or a role mailbox (info@, support@);
- `ivr`: a phone menu ("press 1", "drücken Sie die 1", "按1");
- `us`: the organisation speaking of itself ("call us", "contact us", "欢迎致电", "ご予約");
- `helpline`: an emergency word, or a short number that libphonenumber's short-number catalogue
  (ShortNumberInfo) calls an emergency number or a free short code in the text's countries (112,
  911, 999, 108, 988, 116 123), never a list of our own.
Two kinds make the number an organisation's. A person keeps it: a word making the number
someone's own ("my", "call me", "reach her") just before it, a person's name just before it
(a signature: "Jane Doe, Mobile ..."), or a mobile number without a service word (a sole
trader's or an employee's own phone).
"""

import functools
import re

import phonenumbers
from phonenumbers import PhoneNumberType, shortnumberinfo

from gateway.privacy.regions import regions_of

WINDOW_BEFORE, WINDOW_AFTER = 160, 120
NAME_BEFORE, NAME_AFTER = 60, 12  # a person's name this near the number makes it theirs
MIN_KINDS = 2
SHORT_REGIONS = ("US", "GB", "DE", "FR", "IN", "CN", "JP", "KR", "AU", "CA", "ES", "IT", "BR", "RU", "NL")

_DAYS_EN = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\.?"
_DAYS_DE = r"(?:mo|di|mi|do|fr|sa|so|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)\.?"
_DAYS_ROMANCE = (
    r"(?:lun|mar|mer|jeu|ven|sam|dim|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|lunes|martes"
    r"|miércoles|jueves|viernes|sábado|domingo|lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica"
    r"|seg|sex|sáb|segunda|terça|quarta|quinta|sexta|ma|vr|za|zo|maandag|vrijdag|zaterdag|zondag)\.?"
)
_DASH = r"[ \t]*(?:-|–|—|~|〜|to|through|thru|bis|à|au|a|al|t/m|tot|até)[ \t]*"
HOURS = re.compile(
    rf"(?i)\b(?:{_DAYS_EN}|{_DAYS_DE}|{_DAYS_ROMANCE})(?:-feira)?{_DASH}(?:{_DAYS_EN}|{_DAYS_DE}|{_DAYS_ROMANCE})"
    r"|\b\d{1,2}(?:[:.]\d{2})?[ \t]*(?:am|pm|h|uhr|uur|ч)?[ \t]*(?:-|–|—|~|〜|to|bis|à|a|às|al|tot|до)[ \t]*"
    r"\d{1,2}(?:[:.]\d{2})?[ \t]*(?:am|pm|h\b|uhr|uur|hrs|ч|時|点|시)"
    r"|\b\d{1,2}:\d{2}[ \t]*(?:-|–|—|~|〜)[ \t]*\d{1,2}:\d{2}"
    r"|\b24[ \t]*(?:/|x|×)[ \t]*7\b|\b24[ \t]?(?:h|hrs|hours|horas|ore|uur|Stunden)\b|rund um die Uhr"
    r"|7j/7|opening hours|business hours|office hours|open daily|öffnungszeiten|geschäftszeiten"
    r"|horaires?|horario|orario|openingstijden|horário|часы работы|ежедневно|круглосуточно"
    r"|пн[ \t]*[-–][ \t]*пт"
    r"|de lunes a|du lundi au|dal lunedì al|de segunda a|montag bis|monday (?:to|through) friday"
    r"|营业时间|營業時間|服务时间|服務時間|工作日|周一至周|週一至週|24小时|24小時|営業時間|受付時間|平日|土日祝"
    r"|年中無休|定休|영업시간|운영시간|상담시간|평일|연중무휴|주말|सोमवार से|सोम[ \t]*[-–]|सुबह|24x7"
    r"|ساعات العمل|على مدار الساعة|من الأحد إلى|من السبت إلى"
)
COMPANY = re.compile(
    r"\b(?:Ltd|Limited|LLC|L\.L\.C\.|Inc|Corp|Corporation|PLC|plc|LLP|GmbH|AG|KG|OHG|UG|e\.V\.|S\.A\.S?"
    r"|SAS|SARL|S\.à r\.l\.|S\.L\.U?|S\.p\.A\.|SpA|S\.r\.l\.|Srl|Ltda|S/A|B\.V\.|N\.V\.|Pvt|Co\.|Oy|AB"
    r"|A/S|ASA|K\.K\.|Pty)(?![A-Za-z])"
    r"|株式会社|有限会社|合同会社|有限公司|股份有限公司|集团|集團|주식회사|㈜|\(주\)|ООО|ОАО|ЗАО|ПАО"
    r"|प्राइवेट लिमिटेड|लिमिटेड|شركة|ش\.م\.م"
)
WEB = re.compile(
    r"(?i)https?://|\bwww\.|\b[a-z0-9-]{2,}\.(?:com|net|org|io|co|de|fr|es|it|nl|pt|br|ru|cn|jp|kr|in"
    r"|uk|eu|ch|at|be|info|biz|shop|example)\b(?!@)"
    r"|\b(?:info|support|service|contact|kontakt|hello|sales|help|office|booking|kundenservice|contacto"
    r"|contatto|klantenservice|atendimento)@"
)
IVR = re.compile(
    r"(?i)\b(?:press|dial|option|drücken sie|taste|appuyez sur|tapez|pulse|marque|premere|premi|kies"
    r"|toets|digite|нажмите)[ \t]+(?:the |die |el |la |o )?\d\b|按\d|\d番を|\d번을|\d[ \t]?दबाएं|اضغط"
)
US = re.compile(
    r"(?i)\b(?:call us|contact us|reach us|give us a call|call today|call now|book now|order online"
    r"|our (?:office|team|store|shop|staff|agents?)|sales|bookings|reservations|front desk|reception"
    r"|kontaktieren sie uns|rufen sie uns|erreichen sie uns|unser team|vertrieb|contactez-nous"
    r"|appelez-nous|notre équipe|contáctenos|llámenos|llámanos|nuestro equipo|contattaci|chiamaci"
    r"|il nostro team|segreteria|neem contact|bel ons|ons team|fale conosco|ligue para nós|nossa equipe"
    r"|свяжитесь с нами|звоните нам|позвоните нам)\b"
    r"|欢迎致电|歡迎致電|欢迎来电|歡迎來電|联系我们|聯絡我們|请致电|請致電|订购|預約|预约|お気軽に"
    r"|お電話ください|ご予約|ご相談|ご連絡ください|문의|예약|हमें कॉल करें|संपर्क करें|اتصل بنا|تواصل معنا"
)
HELPLINE_WORDS = re.compile(
    r"(?i)\b(?:emergenc(?:y|ies)|crisis|suicide|samaritans|lifeline|notruf|seelsorge|urgences?"
    r"|emergencias?|emergenza|noodnummer|emergência|экстренн\w*|скорая)\b"
    r"|急救|报警|報警|緊急|救急|110番|긴급|응급|आपातकालीन|एम्बुलेंस|طوارئ|إسعاف"
)
_SHORT = re.compile(r"(?<![\d+])\d{2,3}(?:[ \t]?\d{3})?(?!\d)")
# a person's own number, said so, a little beyond phone_types.OWN_NUMBER_WORDS
OWN = re.compile(
    r"(?i)\b(?:my|his|her|call me|text me|reach me|reach (?:her|him)|call (?:her|him)|mein|meine"
    r"|mon|ma|mi|mio|mia|mijn|meu|minha|ruf mich|appelle-moi|llámame|chiamami|bel me|me liga)\b"
    r"|私の|我的|他的|她的|제 |내 |мой|моя|मेरा|मेरी|رقمي|هاتفي"
)
# a company register or a legal footer ("Impressum", "HRB 12345", "VAT No", "RCS", "P.IVA", "KvK")
REGISTER = re.compile(
    r"(?i)\b(?:impressum|imprint|handelsregister|hrb|hra|ust-?id(?:nr)?|vat (?:no|number|reg)"
    r"|company (?:no|number)"
    r"|registered (?:office|in england)|siret|siren|rcs|mentions légales|cif|nif|p\.? ?iva|partita iva"
    r"|codice fiscale|kvk|btw|cnpj|инн|огрн|кпп)\b"
    r"|法人番号|統一社会信用代码|统一社会信用代码|营业执照|사업자등록번호|사업자 등록번호"
    r"|السجل التجاري|जीएसटी|gstin"
)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def organisation_line(text: str, start: int, end: int, written: str, service_words: re.Pattern) -> bool:
    """The number at text[start:end] is an organisation's by its surroundings (see above)."""
    w_start, w_end = _paragraph(text, start, end)
    before, after = text[w_start:start], text[end:w_end]
    window = before + " " + after
    strong = service_words.search(window) is not None
    if not strong and _kinds(window) < MIN_KINDS:
        return False
    if OWN.search(text, max(w_start, start - 48), start):
        return False
    if not strong and _is_mobile(written, text):
        return False
    return not _person_named_near(text, start, end, w_start, w_end, service_words)


def _paragraph(text: str, start: int, end: int) -> tuple[int, int]:
    w_start, w_end = max(0, start - WINDOW_BEFORE), min(len(text), end + WINDOW_AFTER)
    breaks = [m.end() for m in _PARAGRAPH.finditer(text, w_start, start)]
    if breaks:
        w_start = breaks[-1]
    following = _PARAGRAPH.search(text, end, w_end)
    return w_start, following.start() if following else w_end


def _kinds(window: str) -> int:
    found = sum(pattern.search(window) is not None for pattern in (HOURS, COMPANY, WEB, IVR, US, REGISTER))
    return found + _helpline(window)


def _helpline(window: str) -> bool:
    if HELPLINE_WORDS.search(window):
        return True
    regions = (*regions_of(window), *SHORT_REGIONS)
    return any(
        _short_service(m.group().replace(" ", "").replace("\t", ""), regions) for m in _SHORT.finditer(window)
    )


@functools.lru_cache(maxsize=1024)
def _short_service(digits: str, regions: tuple[str, ...]) -> bool:
    """An emergency number or a free short code in one of the regions (ShortNumberInfo)."""
    for region in regions:
        if shortnumberinfo.is_emergency_number(digits, region):
            return True
        try:
            number = phonenumbers.parse(digits, region)
        except phonenumbers.NumberParseException:
            continue
        if (
            len(digits) >= 3
            and shortnumberinfo.is_valid_short_number_for_region(number, region)
            and shortnumberinfo.expected_cost_for_region(number, region)
            == shortnumberinfo.ShortNumberCost.TOLL_FREE
        ):
            return True
    return False


def _is_mobile(written: str, text: str) -> bool:
    """A mobile number in the first of the text's countries (or the common ones) where it is valid."""
    regions = (
        (None,)
        if written.startswith(("+", "00"))
        else (*regions_of(text), "GB", "DE", "FR", "IN", "CN", "JP", "KR")
    )
    for region in regions:
        try:
            number = phonenumbers.parse(
                written if not written.startswith("00") else "+" + written[2:], region
            )
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return phonenumbers.number_type(number) == PhoneNumberType.MOBILE
    return False


def _person_named_near(
    text: str, start: int, end: int, w_start: int, w_end: int, service_words: re.Pattern
) -> bool:
    """A person's name just before the number (a signature) or just after it, not a company's
    ("Müller Bau GmbH": a legal form follows)."""
    from gateway.privacy.names import person_spans  # the name index loads on first use

    lo, hi = max(w_start, start - NAME_BEFORE), min(w_end, end + NAME_AFTER)
    piece = text[lo:hi]
    for s, e, _ in person_spans(piece):
        if company_name(piece, s, e) or service_words.search(piece[s:e]) or US.search(piece[s:e]):
            continue  # "Müller Bau GmbH", "Customer Support Team"
        return True
    return False


def company_name(text: str, start: int, end: int) -> bool:
    """The name at text[start:end] is a company's: a legal form, a word of its own, follows it
    ("Müller Bau GmbH", not "WorksLimited") or is inside it."""
    if COMPANY.search(text[start:end]) is not None:
        return True
    separated = text[end : end + 1] in (" ", "\t", ",")
    return separated and COMPANY.match(text[end : end + 24].lstrip(" \t,")) is not None

"""Phone numbers, international and in the national formats of CN, JP, KR, DE, FR, UK, US and IN.

A linear pattern finds digit groups that could be a phone number; Google's libphonenumber
metadata (the `phonenumbers` package) decides whether they can be one in any of those regions.
What the written form says decides the rest, so that order numbers and dates stay out:
- `+CC ...` or `00CC ...`: a possible number of that country;
- a national form needs the trunk prefix 0 (every one of those countries but the US writes it),
  the North American (NXX) NXX-XXXX shape, or a mobile number's own shape (CN 1[3-9]x xxxx xxxx,
  IN [6-9]xxxx xxxxx), and digit groups or a phone word before it; a bare run of digits counts
  only as a Chinese mobile number or after a phone word ("tel", "电话", "Handy", ...).
Numbers in fiction ranges (UK 07700 900xxx, US 555) are still numbers someone may own: the check
is the length and shape of a possible number, not an assignment.

The text's language adds its countries (gateway/privacy/regions.py: es -> ES, MX, ...; ru -> RU;
pt -> BR, PT), whose national forms count without a trunk prefix ("612 58 95 20" in Spanish)
when the number is valid there, grouped, after a phone word or in parentheses.
A number is exempt by its type in libphonenumber's metadata, never by a list: toll-free,
premium-rate, shared-cost, UAN (a company's one number for all its sites) and voicemail access
numbers reach a business or a service, not a person (gateway/privacy/phone_types.py reads a
national number in every country's plan). VoIP, pager and personal numbers (UK 070) stay
personal: people own them. After a phone word, a number valid in some country's plan and not a
service's by the vote counts; after an organisation's line word ("hotline", "Kundenservice",
"客服", "お問い合わせ") a number is the organisation's.
"""

import re

import phonenumbers
from phonenumbers import PhoneNumberType

from gateway.privacy.phone_types import in_service_context, is_person_number, is_service_number
from gateway.privacy.regions import regions_of
from gateway.privacy.validators import only_digits

REGIONS = ("CN", "JP", "KR", "DE", "FR", "GB", "US", "IN")
NOT_PERSONAL = frozenset({
    PhoneNumberType.TOLL_FREE, PhoneNumberType.PREMIUM_RATE, PhoneNumberType.SHARED_COST,
    PhoneNumberType.UAN, PhoneNumberType.VOICEMAIL,
})  # fmt: skip
CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9_+])(?:(?:\+|00)[ \t]?)?(?:\([ \t]?\d{1,5}[ \t]?\)|\d)"
    r"(?:[ \t.\-/]{0,2}(?:\([ \t]?\d{1,5}[ \t]?\)|\d)){6,17}(?![A-Za-z0-9_])"
)
CN_MOBILE = re.compile(r"(?:86)?1[3-9]\d{9}")
DATE = re.compile(r"\d{4}([-./])\d{1,2}\1\d{1,2}|\d{1,2}([-./])\d{1,2}\2\d{4}")
DOTTED_QUAD = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
NANP_WITH_ONE = re.compile(r"1[ .\-]\(?[2-9]\d{2}\)?[ .\-/]{1,2}\d{3}[ .\-]\d{4}")
NANP = re.compile(r"\(?[2-9]\d{2}\)?[ .\-/]{1,2}\d{3}[ .\-]\d{4}")
INDIA_MOBILE = re.compile(r"[6-9]\d{4}[ \-]\d{5}")
PHONE_WORDS = re.compile(
    r"(?i)(?:phone|tel\b|tel\.|telephone|mobile|cell|call|text me|whats ?app|fax|contact|reach"
    r"|(?:my|his|her|your|their) number|not answering|messages? to|registered"
    r"|电话|電話|手机|手機|联系|聯繫|致电|拨打|携帯|けいたい|連絡|번호|전화|휴대폰|핸드폰|연락"
    r"|telefon|handy|rufnummer|anrufen|erreichbar|mobil|téléphone|portable|appeler|joindre|tél"
    r"|teléfono|telefono|móvil|movil|celular|llamar|cellulare|chiamare|sms|telemóvel|telefone|ligar"
    r"|telefoon|mobiel|bellen|смс|телефон|тел\.|звонить|позвонить|फ़ोन|फोन|मोबाइल|هاتف|جوال|موبايل|اتصل)"
)
WORD_WINDOW = 40
# numbers that say what they are: an ISBN, an order or a part is no phone
NOT_PHONE_WORDS = re.compile(
    r"(?i)(?:isbn(?:-1[03])?|issn|doi|order|invoice|sku|serial|part|model|lot|ref(?:erence)?|ticket|case|"
    r"tracking|version|build|batch|p\.? ?iva|partita iva|vat(?: id| no\.?)?|ust-?id(?:nr)?|tva|siret|siren)"
    r"(?:[ \t]?(?:no\.?|number|#|nr\.?))?[ \t:#-]{0,3}$"
)


def phone_numbers(text: str) -> list[re.Match]:
    return [match for match in CANDIDATE.finditer(text) if is_phone(match)]


def is_phone(match: re.Match) -> bool:
    """A person's number: of a phone's shape and type, and no organisation's line word before it."""
    return _phone_shaped(match) and not in_service_context(
        match.string, match.start(), match.end(), match.group().strip()
    )


def _phone_shaped(match: re.Match) -> bool:
    written = match.group().strip()
    digits = only_digits(written)
    if not 7 <= len(digits) <= 15:
        return False
    if written.startswith(("+", "00")):
        return _phone_in("+" + (digits[2:] if written.startswith("00") else digits), (None,))
    grouped = len(digits) != len(written)
    worded = _phone_word_before(match)
    if DATE.fullmatch(written) or _inside_code(match):  # 2024-03-15; a UUID's or hash's groups
        return False
    if DOTTED_QUAD.fullmatch(written):  # an IPv4 address (gateway/privacy/validators.py decides)
        return False
    if NOT_PHONE_WORDS.search(match.string, max(0, match.start() - 24), match.start()):
        return False
    nanp = NANP.fullmatch(written) or NANP_WITH_ONE.fullmatch(written)
    own = (*regions_of(match.string), *(("US",) if nanp else ()))
    if is_service_number(digits, own, written):
        return False
    if CN_MOBILE.fullmatch(digits) and not NANP_WITH_ONE.fullmatch(written):  # 1-800-...: NANP
        return True
    shaped = digits[0] == "0" or nanp or INDIA_MOBILE.fullmatch(written)
    if shaped and (grouped or worded):
        return _phone_in(written, (*own, *(region for region in REGIONS if region not in own)))
    if worded and is_person_number(digits):
        return True  # after a phone word, a number some country's plan gives a person
    enclosed = match.string[match.start() - 1 : match.start()] == "(" and match.string[
        match.end() :
    ].startswith(")")
    return (grouped or enclosed) and _national(written, match.string)


def _national(written: str, text: str) -> bool:
    """A valid number, of a personal type, of a country of the text's language."""
    for region in regions_of(text):
        number = _parsed(written, region)
        if number is not None and phonenumbers.is_valid_number(number):
            return phonenumbers.number_type(number) not in NOT_PERSONAL
    return False


def _inside_code(match: re.Match) -> bool:
    before, after = (
        match.string[match.start() - 1 : match.start()],
        match.string[match.end() : match.end() + 1],
    )
    return before == "-" or after == "-" or (after.isascii() and after.isalpha())


def _parsed(written: str, region: str | None) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(written, region)
    except phonenumbers.NumberParseException:
        return None


def _phone_in(written: str, regions: tuple[str | None, ...]) -> bool:
    """Valid, and not a service's, in one of the regions (None: the number's own country code),
    or of a possible length in one (fail closed)."""
    parsed = [number for number in (_parsed(written, region) for region in regions) if number is not None]
    valid = [number for number in parsed if phonenumbers.is_valid_number(number)]
    if valid:
        return any(phonenumbers.number_type(number) not in NOT_PERSONAL for number in valid)
    return any(phonenumbers.is_possible_number(number) for number in parsed)


def _phone_word_before(match: re.Match) -> bool:
    return PHONE_WORDS.search(match.string, max(0, match.start() - WORD_WINDOW), match.start()) is not None

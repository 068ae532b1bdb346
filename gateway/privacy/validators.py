"""What turns a pattern's candidate into a finding: check digits, ranges, parses, context."""

import ipaddress
import re

import gateway.privacy.checksums as checksums

# ISO 13616 registry: the IBAN length of each country (a BIC or word after it is not part of it)
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
VERSION_WORDS = ("version", "ver", "ver.", "v", "release", "build", "firmware", "release:")


def only_digits(text: str) -> str:
    return re.sub(r"\D", "", text)


# words that make "look at the dot com bubble" read as look@the.com once `at`/`dot` are spelled
# back (gateway/privacy/normalize.py): never an address's local part or domain label
PROSE_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our",
    "their", "me", "you", "him", "us", "them", "it", "look", "looking", "looked", "meet", "meeting",
    "arrive", "arrived", "stay", "stayed", "be", "is", "are", "was", "were", "here", "there", "home",
    "work", "school", "night", "noon", "least", "most", "all", "once", "first", "last", "dot", "com",
    "net", "org",
})  # fmt: skip


# RFC 2606 and RFC 6761: names reserved for documentation and tests, nobody's mailbox
RESERVED_DOMAINS = frozenset({"example.com", "example.org", "example.net", "localhost"})
RESERVED_TOP_LEVELS = frozenset({"example", "test", "invalid", "localhost", "local"})
# code or an example: where example.com stands for any address
CODE_SIGNS = re.compile(
    r"(?i)```|\bcurl\b|\$\{|(?<![@.\w])(?:example|sample|dummy|placeholder|smtp"
    r"|test|prueba|teste|prova|beispiel|exemple|ejemplo|exemplo|esempio|voorbeeld)\b(?!\.\w)"
    r"|пример|тест|示例|例|サンプル|예시|उदाहरण|مثال"
)
# the address is a mail field's value in code or configuration: `admin_email: "`, `user = '`
ASSIGNED = re.compile(
    r"(?i)[\w.-]*(?:e-?mail|user|login|from|to|sender|recipient|admin|contact)"
    r"[\w.-]*[\"']?[ \t]*(?::|=|:=|=>)"
    r"[ \t]*[\"'`]?$"
)
# RFC 2142's role mailboxes and their like in our languages: an organisation's, not a person's
ROLE_MAILBOXES = frozenset({
    "info", "marketing", "sales", "support", "abuse", "noc", "security", "postmaster", "hostmaster",
    "webmaster", "www", "contact", "hello", "help", "service", "noreply", "no-reply", "donotreply",
    "office", "press", "presse", "privacy", "datenschutz", "kontakt", "contacto", "contato", "contatto",
    "ventas", "vertrieb", "billing", "jobs", "careers", "kundenservice", "service-client", "atendimento",
})  # fmt: skip


def email(match: re.Match) -> bool:
    """The domain ends in a top-level label of two or more letters; neither the local part nor a
    domain label below the top is an ordinary word of prose; no reserved example domain, no
    organisation's role mailbox (info@, support@)."""
    local, _, domain = match.group().partition("@")
    labels = domain.lower().split(".")
    top_level = labels[-1]
    prose = local.lower() in PROSE_WORDS or any(label in PROSE_WORDS for label in labels[:-1])
    role = local.lower() in ROLE_MAILBOXES
    return len(top_level) >= 2 and top_level.isalpha() and not (prose or role or _dummy(labels, match))


def _dummy(labels: list[str], match: re.Match) -> bool:
    """A reserved example domain in code, configuration or an example; in prose it stays
    personal (fail closed: "write to jane@example.com" may be a real address, redacted)."""
    reserved = ".".join(labels[-2:]) in RESERVED_DOMAINS or labels[-1] in RESERVED_TOP_LEVELS
    if not reserved:
        return False
    before = match.string[max(0, match.start() - 40) : match.start()]
    return ASSIGNED.search(before) is not None or CODE_SIGNS.search(match.string) is not None


CARD_WORDS = re.compile(
    r"(?i)card|karte|carte|tarjeta|cart[ãa]o|carta|kaart|карт|卡|カード|카드|कार्ड|بطاقة|maestro"
)
CARD_WORD_WINDOW = 24


def card(match: re.Match) -> bool:
    """13 to 19 digits (12 for Maestro after a card word), Luhn-valid, with an issuer prefix in
    use (1: UATP, JCB 1800; 2-6)."""
    number = only_digits(match.group())
    if match.string[max(0, match.start() - 1) : match.start()] == "+":  # +49 177 ...: a phone
        return False
    if len(number) == 12:  # Maestro's shortest: only after a card word
        before = match.string[max(0, match.start() - CARD_WORD_WINDOW) : match.start()]
        return number[0] in "56" and checksums.luhn_valid(number) and CARD_WORDS.search(before) is not None
    return 13 <= len(number) <= 19 and number[0] in "123456" and checksums.luhn_valid(number)


def iban(match: re.Match) -> bool:
    compact = re.sub(r"[\s-]", "", match.group()).upper()
    length = IBAN_LENGTHS.get(compact[:2])
    return length is not None and len(compact) >= length and checksums.iban_valid(compact[:length])


def ip_address(match: re.Match) -> bool:
    try:
        address = ipaddress.ip_address(match.group())
    except ValueError:
        return False
    if not address.is_global:  # loopback, private ranges, link-local, documentation: nobody's
        return False
    before = match.string[max(0, match.start() - 12) : match.start()].lower().split()
    return not (address.version == 4 and before and before[-1] in VERSION_WORDS)  # "version 1.2.3.4"


PERSONNUMMER_WORDS = re.compile(
    r"(?i)person(?:nummer|nr)|samordningsnummer|henkilötunnus|personal (?:id|number)"
)


def swedish_personnummer(match: re.Match) -> bool:
    """Luhn over YYMMDDNNNC, a real month and day (60 added for a coordination number), and the
    dash before the last four or "personnummer" before it (a Unix time passes the rest 1 in 20)."""
    written = match.group()
    number = only_digits(written)[-10:]
    month, day = int(number[2:4]), int(number[4:6]) % 60
    before = match.string[max(0, match.start() - 40) : match.start()]
    said = "-" in written or "+" in written or PERSONNUMMER_WORDS.search(before) is not None
    return said and 1 <= month <= 12 and 1 <= day <= 31 and checksums.luhn_valid(number)


INTERNATIONAL_PREFIX = re.compile(r"(?:\+|\b00)\d{1,3}[ ]?$")


def us_ssn(match: re.Match) -> bool:
    """Separated (123-45-6789, 123 45 6789) or bare after an SSN keyword: in an issued range.
    Spaced after a country code ("+55 800 12 3456") it is the rest of a phone number."""
    number = only_digits(match.group("ssn") or match.group("bare"))
    before = match.string[max(0, match.start() - 6) : match.start()]
    if match.group("ssn") and " " in match.group("ssn") and INTERNATIONAL_PREFIX.search(before):
        return False
    return len(number) == 9 and checksums.us_ssn_plausible(number[:3], number[3:5], number[5:])


def spanish_dni(match: re.Match) -> bool:
    return checksums.spanish_dni_valid(match.group())


BSN_WORDS = re.compile(r"(?i)\b(?:bsn|burgerservicenummer|sofi-?nummer|sofinummer|citizen service number)\b")


def dutch_bsn(match: re.Match) -> bool:
    """The 11-test passes 1 in 11 nine-digit numbers: a bare or spaced one needs "BSN" before it;
    the dotted 1234.56.789 is a BSN's own way of writing."""
    written = match.group()
    dotted = re.fullmatch(r"\d{4}\.\d{2}\.\d{3}", written) is not None
    before = match.string[max(0, match.start() - 40) : match.start()]
    said = BSN_WORDS.search(before) is not None
    return checksums.dutch_bsn_valid(only_digits(written)) and (dotted or said)


def finnish_hetu(match: re.Match) -> bool:
    return checksums.finnish_hetu_valid(match.group())


def chinese_resident_id(match: re.Match) -> bool:
    return checksums.chinese_resident_id_valid(match.group().replace(" ", ""))


def aadhaar(match: re.Match) -> bool:
    return checksums.verhoeff_valid(only_digits(match.group()))


def german_tax_id(match: re.Match) -> bool:
    return checksums.german_tax_id_valid(only_digits(match.group()))


def german_id_card(match: re.Match) -> bool:
    value = match.group().upper()
    return any(c.isdigit() for c in value[:9]) and checksums.icao_check_digit(value[:9]) == int(value[9])


def italian_fiscal_code(match: re.Match) -> bool:
    return checksums.italian_fiscal_code_valid(match.group())

"""Whom a nationally written phone number reaches, a person or a service, read from every
country's numbering plan in libphonenumber's metadata (the `phonenumbers` package).

A number written without its country code ("0800 12 345", "0570-123-456") is read as a national
number of each of the ~245 regions: its type there is the first of libphonenumber's own order
(premium, toll-free, shared cost, VoIP, personal, pager, UAN, voicemail, then fixed line or
mobile) whose pattern it matches. Toll-free, premium-rate, shared-cost, UAN and voicemail
numbers reach a business or a service; the others a person. The country codes that read it
vote (is_service_number), the text's own countries (gateway/privacy/regions.py) and those whose
national format groups the digits as they are written weighing more;
written nationally, a number's country is a guess, and libphonenumber's example numbers measure
it: two thirds of the service numbers are told apart, at the cost of 1 in 60 personal ones.
The plans are compiled once (functools.cache); a reading is a few hundred regex matches on a
string of at most 17 digits.
"""

import functools
import re
from dataclasses import dataclass

import phonenumbers
from phonenumbers.phonemetadata import PhoneMetadata
from phonenumbers.phonenumberutil import SUPPORTED_REGIONS

SERVICE_WEIGHT = 2  # a service's reading against a person's: its plan is the narrower one
OWN_WEIGHT = 4  # a reading in a country of the text's language, against the others'
_DIGIT_GROUPS = re.compile(r"\d+")
# libphonenumber's order of the types (phonenumberutil._number_type_helper), service or not
TYPE_ORDER = (
    ("premium_rate", True), ("toll_free", True), ("shared_cost", True), ("voip", False),
    ("personal_number", False), ("pager", False), ("uan", True), ("voicemail", True),
    ("fixed_line", False), ("mobile", False),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Plan:
    """One region's numbering plan: its national prefix, the pattern any of its numbers
    matches, and (pattern, is_service) for each type it defines, in libphonenumber's order."""

    region: str
    national_prefix: str | None
    general: re.Pattern
    types: tuple[tuple[re.Pattern, bool], ...]


@functools.cache
def plans() -> tuple[Plan, ...]:
    built = []
    for region in sorted(SUPPORTED_REGIONS):
        metadata = PhoneMetadata.metadata_for_region(region)
        if metadata is None or metadata.general_desc is None:
            continue
        types = []
        for name, is_service in TYPE_ORDER:
            desc = getattr(metadata, name, None)
            if desc is not None and desc.national_number_pattern:
                types.append((re.compile(desc.national_number_pattern), is_service))
        general = re.compile(metadata.general_desc.national_number_pattern or r"(?!)")
        built.append(Plan(region, metadata.national_prefix, general, tuple(types)))
    return tuple(built)


@functools.lru_cache(maxsize=2048)
def readings(digits: str) -> tuple[tuple[str, bool], ...]:
    """(region, is_service) for every region where the digits are a valid national number."""
    found = []
    for plan in plans():
        national = [digits]
        if plan.national_prefix and digits.startswith(plan.national_prefix):
            national.append(digits[len(plan.national_prefix) :])
        for number in national:
            is_service = _type_of(plan, number)
            if is_service is not None:
                found.append((plan.region, is_service))
                break
    return tuple(found)


def _type_of(plan: Plan, number: str) -> bool | None:
    """Whether the national number is a service's in the plan; None: not a number there."""
    if not plan.general.fullmatch(number):
        return None
    for pattern, is_service in plan.types:
        if pattern.fullmatch(number):
            return is_service
    return None


@functools.lru_cache(maxsize=2048)
def written_as_in(written: str) -> frozenset[str]:
    """The regions whose national format groups the number's digits as it is written
    ("0810 12 34 56": France's overseas departments, not Argentina's 0810-123-4567)."""
    groups = tuple(len(group) for group in _DIGIT_GROUPS.findall(written))
    if len(groups) < 2:
        return frozenset()
    regions = set()
    for region, _ in readings("".join(_DIGIT_GROUPS.findall(written))):
        try:
            number = phonenumbers.parse(written, region)
        except phonenumbers.NumberParseException:
            continue
        national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
        if tuple(len(group) for group in _DIGIT_GROUPS.findall(national)) == groups:
            regions.add(region)
    return frozenset(regions)


def is_service_number(digits: str, own_regions: tuple[str, ...], written: str = "") -> bool:
    """A service's number: the country codes that read it at all read it as a service's more
    than 1 / SERVICE_WEIGHT as often as a person's, a country of the text's language counting
    OWN_WEIGHT times; regions sharing a code (GB and GG, FI and AX) share a plan and count once.
    A tie is a person's (fail closed)."""
    services: dict[int, int] = {}
    persons: dict[int, int] = {}
    formats = written_as_in(written) if written else frozenset()
    for region, is_service in readings(digits):
        weight = OWN_WEIGHT if region in own_regions or region in formats else 1
        code = phonenumbers.country_code_for_region(region)
        tally = services if is_service else persons
        tally[code] = max(tally.get(code, 0), weight)
    num_services, num_persons = sum(services.values()), sum(persons.values())
    return num_services > 0 and num_services * SERVICE_WEIGHT > num_persons  # a tie: a person


def is_person_number(digits: str) -> bool:
    """Valid in some region, and not a service's by the vote."""
    found = readings(digits)
    services = sum(is_service for _, is_service in found)
    return bool(found) and services < len(found) - services


# A company's or a public service's line, named as such ("Kundenservice", "numero verde", "客服",
# "お問い合わせ"): a number that follows one is the organisation's, whatever its type.
SERVICE_WORDS = re.compile(
    r"(?i)(?:hotline|helpline|help desk|helpdesk|customer (?:service|care|support)|support line"
    r"|call cent(?:er|re)|service (?:line|number)|switchboard|toll[ -]free|freephone|enquiries|reservations"
    r"|kundenservice|kundendienst|servicenummer|service-hotline|kostenlos|gebührenfrei|zentrale"
    r"|service client|numéro vert|appel gratuit|standard téléphonique|service après-vente"
    r"|atención al cliente|servicio al cliente|línea gratuita|línea de atención|centralita"
    r"|atendimento|linha gratuita|numero verde|servizio clienti|assistenza clienti|centralino"
    r"|klantenservice|gratis nummer|горячая линия|служба поддержки|справочная|колл-центр"
    r"|контакт-центр|телефон доверия|бесплатн|客服|热线|熱線|免费电话|免費電話|总机|總機|服务中心"
    r"|咨询电话|お問い合わせ|問い合わせ|問合せ|カスタマーセンター|サポートセンター|フリーダイヤル"
    r"|ナビダイヤル|コールセンター|インフォメーションセンター"
    r"|information (?:line|cent(?:er|re)|desk)"
    r"|代表電話|고객센터|콜센터|대표번호|상담센터|수신자부담|ग्राहक सेवा"
    r"|हेल्पलाइन|टोल फ्री|कस्टमर केयर|خدمة العملاء|الخط الساخن|رقم مجاني|مركز الاتصال)"
)
# a person's own number, said so: outweighs an organisation's word near it
OWN_NUMBER_WORDS = re.compile(
    r"(?i)(?:\b(?:my|his|her|call me|text me|mein|meine|mon|ma|mi|mio|mia|mijn|meu|minha)\b"
    r"|私の|我的|他的|她的|제 |내 |мой|мой|मेरा|मेरी|رقمي|هاتفي)"
)
CONTEXT_CHARS = 48


def in_service_context(text: str, start: int, end: int | None = None, written: str = "") -> bool:
    """An organisation's line word before the number, and no word making it someone's own; or,
    given the number's end, the organisation's signals around it (service_context.py)."""
    before = text[max(0, start - CONTEXT_CHARS) : start]
    if OWN_NUMBER_WORDS.search(before) is not None:
        return False
    if SERVICE_WORDS.search(before) is not None:
        return True
    if end is None:
        return False
    from gateway.privacy.service_context import organisation_line

    return organisation_line(text, start, end, written or text[start:end], SERVICE_WORDS)

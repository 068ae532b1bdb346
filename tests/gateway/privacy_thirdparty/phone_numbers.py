"""libphonenumber's example numbers (phonenumbers' metadata): one per region and number type, and
one per non-geographic calling code (+800, +808, +870, ...), by its type.

The type decides the label, not the number. Private: the number of a subscriber, someone's
line: MOBILE, FIXED_LINE, FIXED_LINE_OR_MOBILE, PERSONAL_NUMBER, PAGER, VOIP. Public: a
service's number, printed for everyone to call: TOLL_FREE, PREMIUM_RATE, SHARED_COST, UAN (a
company's universal access number), VOICEMAIL (the operator's voicemail access number).
Each is written in its national and its international format alternately, in a presidio-evaluator
template whose one slot is a phone number."""

import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from tests.gateway.privacy_thirdparty.carriers import fill, language_of, single_slot
from tests.gateway.privacy_thirdparty.case import Case

PRIVATE_TYPES = {
    PhoneNumberType.MOBILE: "phone_mobile",
    PhoneNumberType.FIXED_LINE: "phone_fixed_line",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "phone_fixed_line",
    PhoneNumberType.PERSONAL_NUMBER: "phone_personal",
    PhoneNumberType.PAGER: "phone_pager",
    PhoneNumberType.VOIP: "phone_voip",
}
PUBLIC_TYPES = {
    PhoneNumberType.TOLL_FREE: "phone_toll_free",
    PhoneNumberType.PREMIUM_RATE: "phone_premium_rate",
    PhoneNumberType.SHARED_COST: "phone_shared_cost",
    PhoneNumberType.UAN: "phone_uan",
    PhoneNumberType.VOICEMAIL: "phone_voicemail",
}
TYPES = {**PRIVATE_TYPES, **PUBLIC_TYPES}


def examples() -> list[tuple[str, int, phonenumbers.PhoneNumber]]:
    """(region or "001" for non-geographic, type, number), regions and types in a fixed order; a
    number that is the example of two types (FIXED_LINE and FIXED_LINE_OR_MOBILE) once."""
    found = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        seen = set()
        for number_type in TYPES:
            number = phonenumbers.example_number_for_type(region, number_type)
            if number is not None and number.national_number not in seen:
                seen.add(number.national_number)
                found.append((region, number_type, number))
    for code in sorted(phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS):
        number = phonenumbers.example_number_for_non_geo_entity(code)
        if number is not None and phonenumbers.number_type(number) in TYPES:
            found.append(("001", phonenumbers.number_type(number), number))
    return found


def phone_cases() -> list[Case]:
    templates = single_slot("phone_number")
    cases = []
    for i, (region, number_type, number) in enumerate(examples()):
        national = i % 2 == 0 and region != "001"
        form = PhoneNumberFormat.NATIONAL if national else PhoneNumberFormat.INTERNATIONAL
        text = fill(templates[i % len(templates)], phonenumbers.format_number(number, form))
        language = language_of(region) if region != "001" else "und"
        source = f"phonenumbers example_number {region} {PhoneNumberType.to_string(number_type)}"
        cases.append(Case(TYPES[number_type], language, text, number_type in PRIVATE_TYPES, source))
    return cases

"""Faker in every locale: what each locale's own providers make (a locale without its own provider
falls back to en_US's, which is then skipped: it would be en_US again), in presidio-evaluator
templates whose one slot is that kind.

Private: a person's name, address, phone number, social security number. A name is private in
the templates about a customer or a contact ("It's under my partner's name {{person}}"); the
templates about public figures, businesses and public places are not used (carriers.py:
PUBLIC_CONTEXT); there a name or an address is not personal data to keep on-prem. Public: a company's name and a city, in
templates that say no more about a person than where they work or live."""

from faker import Faker
from faker.config import AVAILABLE_LOCALES

from tests.gateway.privacy_thirdparty.carriers import about_private_person, fill, locale_language, single_slot
from tests.gateway.privacy_thirdparty.case import Case

SEED = 61
# kind -> (the Faker provider that must be the locale's own, its method, template slots, private)
KINDS = {
    "name": ("person", "name", ("person", "name"), True),
    "address": ("address", "address", ("address",), True),
    "phone": ("phone_number", "phone_number", ("phone_number",), True),
    "ssn": ("ssn", "ssn", ("ssn",), True),
    "company": ("company", "company", ("organization",), False),
    "city": ("address", "city", ("city",), False),
}
PER_LOCALE = 2  # cases per kind and locale, in different templates
DEPRECATED = {"fr_QC"}  # Faker warns: use fr_CA, which is in the list
UNSEEDED = {("it_IT", "city")}  # draws from a set: its order is the process's string hashing


def carriers(slots: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in single_slot(*slots) if about_private_person(t))


def own_providers(fake: Faker, locale: str) -> set[str]:
    """The providers this locale defines itself (faker.providers.<name>.<locale>)."""
    own = set()
    for provider in fake.get_providers():
        module = type(provider).__module__
        if module.endswith(f".{locale}"):
            own.add(module.split(".")[2])
    return own


def faker_cases() -> list[Case]:
    cases = []
    templates = {kind: carriers(slots) for kind, (_, _, slots, _) in KINDS.items()}
    for locale_index, locale in enumerate(sorted(set(AVAILABLE_LOCALES) - DEPRECATED)):
        fake = Faker(locale)
        fake.seed_instance(SEED + locale_index)
        own = own_providers(fake, locale)
        for kind, (provider, method, _, is_private) in KINDS.items():
            if provider not in own or not hasattr(fake, method) or (locale, method) in UNSEEDED:
                continue
            for i in range(PER_LOCALE):
                template = templates[kind][(locale_index * PER_LOCALE + i) % len(templates[kind])]
                text = fill(template, getattr(fake, method)())
                source = f"faker {locale} {method}() + presidio-evaluator template"
                cases.append(Case(kind, locale_language(locale), text, is_private, source))
    return cases

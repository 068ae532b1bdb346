"""Carrier sentences and languages from third-party data.

Sentences: presidio-evaluator's templates (its data_generator/raw_data/templates.txt), read as a
file: importing the package loads spaCy and takes ~10 s. A template is used for a kind only when
its one slot is that kind's, so the rest of the sentence is the template author's text.
Languages: a country's language is that of Faker's first locale for the country.
"""

import functools
import importlib.util
import re
from pathlib import Path

import faker.config

SLOT = re.compile(r"\{\{(\w+)\}\}")
# Templates whose names and addresses are not a private person's: public figures (songs, films,
# news, a keynote), businesses (offices, a restaurant, a letterhead) and public places (a bus
# stop, a street corner). A name or an address in them is not personal data to keep on-prem.
PUBLIC_CONTEXT = (
    "concert", "speak yet", "conference", "tribute", "coda", "killers", "Directed By", "keynote",
    "tennis player", "Entertainment Weekly", "Hobbits", "graffiti", "fan. Written", "title refers",
    "Carry Me Back", "celebrity", "company songs", "big three", "songwriter", "film", "spent a year",
    "CEO", "glad to hear", "restaurant", "place downtown", "offices", "The address of", "office is at",
    "Pedestrians", "bus", "corner of", "north side of", "{{ORGANIZATION}}\\n\\n", "at {{ORGANIZATION}}",
)  # fmt: skip


def templates_path() -> Path:
    spec = importlib.util.find_spec("presidio_evaluator")
    assert spec is not None and spec.submodule_search_locations, "presidio-evaluator is not installed"
    root = Path(next(iter(spec.submodule_search_locations)))
    return root / "data_generator" / "raw_data" / "templates.txt"


@functools.cache
def templates() -> tuple[str, ...]:
    """The templates, their escaped line breaks (`\\n` in the file) made real ones."""
    lines = templates_path().read_text(encoding="utf-8").splitlines()
    return tuple(line.strip().replace("\\n", "\n") for line in lines if line.strip())


def single_slot(*slots: str) -> tuple[str, ...]:
    """Templates whose only slot (used once) is one of `slots`."""
    return tuple(t for t in templates() if len(found := SLOT.findall(t)) == 1 and found[0] in slots)


def about_private_person(template: str) -> bool:
    return not any(marker in template for marker in PUBLIC_CONTEXT)


def fill(template: str, value: str) -> str:
    return SLOT.sub(lambda _: value, template)


def slotless() -> tuple[str, ...]:
    """Templates with no slot at all: sentences without personal data."""
    return tuple(t for t in templates() if "{" not in t)


@functools.cache
def country_language() -> dict[str, str]:
    """ISO 3166 country code (upper case) -> ISO 639 language of Faker's first locale for it."""
    languages: dict[str, str] = {}
    for locale in sorted(faker.config.AVAILABLE_LOCALES):
        language, _, country = locale.partition("_")
        if country:
            languages.setdefault(country, language)
    return languages


def language_of(country: str) -> str:
    """The country's language, "und" (BCP 47: undetermined) when Faker has no locale for it."""
    return country_language().get(country.upper(), "und")


def locale_language(locale: str) -> str:
    return locale.partition("_")[0]

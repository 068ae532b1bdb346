"""Labels that say a number identifies a business or a thing ("ACN: 010 499 966", "EIN:
04-2103594", "n° TVA: 40303265045", "ISO 11649: RF18 5390 0754 7034"), read from python-stdnum's
catalogue: the abbreviations in the docstrings of the modules that gateway/privacy/catalogue.py
does not classify as a person's (VAT, company and trade registers, securities, references).

A number directly after such a label is what the label says, not a phone, a card or a person's
id that happens to share its shape. Modules whose abbreviation also names a person's number
(IBAN, "RIC No.", TIN, NIF, NIT, CF, device ids) are left out.
"""

import functools
import importlib
import pkgutil
import warnings

import stdnum

from gateway.privacy.catalogue import PERSON_IDS, catalogue, docstring_words, fold

NOT_THING_MODULES = frozenset({
    "iban", "be.iban", "es.iban", "me.iban", "no.iban", "nl.identiteitskaartnummer", "cn.ric", "at.tin",
    "gh.tin", "th.tin", "imei", "imsi", "meid", "mac", "ro.cf", "dz.nif", "gt.nit", "sv.nit", "jp.cn",
    "ca.bn",
})  # fmt: skip
MAX_LABEL_WORDS = 4
LABEL_CHARS = 40
TRAILERS = frozenset({"no", "nr", "n°", "number", "#", "nº"})  # "EIN no. 04-2103594"


@functools.cache
def thing_labels() -> frozenset[str]:
    """Folded abbreviations (and multi-word names before the parenthesis) of the modules that
    identify businesses and things, less those that also name a person's number."""
    labels: set[str] = set()
    for module_info in pkgutil.walk_packages(stdnum.__path__, "stdnum."):
        name = module_info.name.removeprefix("stdnum.")
        if module_info.ispkg or name in PERSON_IDS or name in NOT_THING_MODULES or name.count(".") > 1:
            continue
        try:
            with warnings.catch_warnings():  # renamed modules (iso9362 -> bic) warn when imported
                warnings.simplefilter("ignore", DeprecationWarning)
                module = importlib.import_module(module_info.name)
        except ImportError:
            continue
        words = docstring_words(module.__doc__ or "")
        abbreviations = words[:-1] if words and " " in words[-1] and len(words) > 1 else words
        labels.update(fold(word) for word in abbreviations)
    person_words = catalogue().word_to_ids  # "RUT": Uruguay's companies', Chile's people's
    return frozenset(label for label in labels if label and label not in person_words)


def follows_thing_label(text: str, start: int) -> bool:
    """The words right before `start` (a colon, "no." or "#" aside) are a thing's label."""
    words = fold(text[max(0, start - LABEL_CHARS) : start]).split()
    while words and words[-1] in TRAILERS:
        words.pop()
    labels = thing_labels()
    return any(" ".join(words[-size:]) in labels for size in range(1, min(MAX_LABEL_WORDS, len(words)) + 1))

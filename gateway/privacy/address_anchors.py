"""An address the sender gives as where they live, or where something of theirs goes: after
"my (new) address", "address is", "send it to", "meet me at", "taxi to", "lives at" comes an address-shaped
stretch, which is personal data on its own (as an anchored name is: gateway/privacy/names.py).

Address-shaped, within ANCHOR_REACH characters after the anchor: what gateway/privacy/
addresses.py recognizes, or a house number with a street word of any of Faker's 100-odd
locales (its `street_suffixes` and `street_prefixes`, a maintained catalogue: "Rayansingel 64",
"Uunisepäntie 812", "Síp utca 17", "Aleea Albu Nr. 857"), or a house number followed by a line
that starts with a postcode and a place ("... 40\\n2327 Ecublens").
"""

import functools
import importlib
import pkgutil
import re

from gateway.privacy.addresses import ADDRESS
from gateway.privacy.gated import after_words, gated, in_script

ANCHOR_REACH = 120
ANCHOR = gated(
    after_words(
        r"(?i)\b(?:address(?:es)?\b|(?:sent|send|deliver(?:ed)?|ship(?:ped)?|mail(?:ed)?|return(?:ed)?"
        r"|forward(?:ed)?)(?:[ \t]+(?:it|this|them|that|the[ \t]+\w{1,20}))?[ \t]+to\b"
        r"|(?:meet|pick)[ \t]+me[ \t]+(?:up[ \t]+)?at\b|taxi[ \t]+to\b|arrived[ \t]+at\b"
        r"|li(?:ve|ves|ved|ving)[ \t]+(?:at|in|on)\b|moved[ \t]+to\b)",
        "address sent send deliver ship mail return forward me_ taxi arrived live moved",
    ),
    after_words(  # the other languages' "address", "deliver to", "lives at"
        r"(?i)\b(?:adresse|anschrift|lieferadresse|liefern[ \t]+sie[ \t]+(?:bitte[ \t]+)?an|schicken[ \t]+an"
        r"|wohnt[ \t]+in|wohnhaft|domicilié|livrer[ \t]+à|envoyer[ \t]+à|habite[ \t]+(?:au|à)|dirección"
        r"|domicilio|enviar[ \t]+(?:a|para)|vive[ \t]+en|endereço|morada|mora[ \t]+(?:na|em|no)|indirizzo"
        r"|spedire[ \t]+a|abita[ \t]+(?:in|a)|residente[ \t]+in|adres|bezorgen[ \t]+(?:op|bij)"
        r"|woont[ \t]+(?:op|aan|in))",
        "adres anschrift liefer schick wohn domicil livrer envoyer habite direcci enviar vive endere morada"
        " mora indirizzo spedire abita residente bezorgen woont",
    ),
    in_script(  # first letters up front: the engine skips every other position at once
        r"(?=[адпАДПعيप地寄送收住配주배])(?:(?i:адрес|доставк|проживает)|عنوان|يسكن|पता|पते|地址|寄到|送到"
        r"|收件|住所|配送先|送り先|주소|배송지)",
        "cyrillic",
        "arabic",
        "devanagari",
        "han",
        "kana",
        "hangul",
    ),
)
_HOUSE_NUMBER = re.compile(r"(?<![\d.,:/-])\d{1,5}[a-zA-Z]?\b(?![.,:/-]?\d)")
_POSTCODE_LINE = re.compile(
    r"\b\d{1,5}[a-zA-Z]?,?[ \t]*\n[ \t]*(?:[A-Z]{1,2}[- ]?)?\d{3,5}(?:[ -]\d{2,3})?[ \t]+\w"
)
_WORD = re.compile(r"[^\W\d_]{3,}")
# a postal address's structure in a script other than Latin (in Latin, "step 3, then step 4, page
# 1234" has it too): two or more parts separated by commas or lines, then
# a postcode closing its line ("ষ্টুডিও 6, বাসা নং 6, শাজাহানগাঁও, জামালপুর, 3695")
_SEGMENTED = re.compile(
    r"(?:[^\n,،;:?!]{2,50}+[,،\n][ \t]*){2,6}+[^\n,،\d]{0,40}+(?<!\d)\d{4,7}(?=[ \t]*(?:$|[\n.?!)]))",
    re.MULTILINE,
)
# US military post: "PSC 1127, Box 8569", "APO AE 73185", "FPO AP 41898"
MILITARY_POST = re.compile(
    r"\b(?:PSC|CMR|Unit)[ \t]\d{1,5},?[ \t]Box[ \t]\d{1,5}\b|\b[AFD]PO[ \t]A[AEP][ \t]\d{5}\b"
)


@functools.cache
def street_words() -> frozenset[str]:
    """Faker's street suffixes and prefixes of every locale: single words of 3 letters or more,
    casefolded (ImportError without Faker: the free-text stage is then off)."""
    package = importlib.import_module("faker.providers.address")
    words = set()
    for module in pkgutil.iter_modules(package.__path__):
        provider = importlib.import_module(f"faker.providers.address.{module.name}").Provider
        for attr in ("street_suffixes", "street_prefixes", "street_suffixes_long", "street_prefixes_long"):
            words.update(
                w.strip().casefold() for w in getattr(provider, attr, ()) if _WORD.fullmatch(w.strip())
            )
    return frozenset(words)


def anchored_addresses(text: str) -> list[tuple[str, int, int]]:
    """("person_address", start, end) of each stretch after an anchor that is address-shaped
    (overlapping stretches are read once, merged: a text of anchors stays linear)."""
    stretches: list[tuple[int, int, int]] = []  # (anchor start, stretch start, stretch end)
    for match in ANCHOR.finditer(text):
        end = min(len(text), match.end() + ANCHOR_REACH)
        if stretches and match.end() <= stretches[-1][2]:
            stretches[-1] = (stretches[-1][0], stretches[-1][1], end)
        else:
            stretches.append((match.start(), match.end(), end))
    return [
        ("person_address", anchor, end)
        for anchor, start, end in stretches
        if _address_shaped(text[start:end])
    ]


def _address_shaped(stretch: str) -> bool:
    if any(pattern.search(stretch) for pattern in (ADDRESS, _POSTCODE_LINE, MILITARY_POST)):
        return True
    if _SEGMENTED.search(stretch) and _mostly_other_script(stretch):
        return True
    if not _HOUSE_NUMBER.search(stretch):
        return False
    streets = street_words()
    for word in _WORD.findall(stretch):
        folded = word.casefold()
        if folded in streets or any(folded[-k:] in streets for k in range(4, min(9, len(folded)))):
            return True
    return False


def _mostly_other_script(stretch: str) -> bool:
    letters = [char for char in stretch if char.isalpha()]
    return sum(not char.isascii() for char in letters) * 2 > len(letters)

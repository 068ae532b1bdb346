"""Check-digit algorithms that tell real identifiers from look-alike digit strings."""

import string

_LETTER_VALUES = {c: i + 10 for i, c in enumerate(string.ascii_uppercase)}


def luhn_valid(digits: str) -> bool:
    """Card numbers, Swedish personnummer (last 10 digits), IMEI."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters -> 10..35, mod 97 == 1."""
    rearranged = iban[4:] + iban[:4]
    number = "".join(str(_LETTER_VALUES[c]) if c.isalpha() else c for c in rearranged)
    return int(number) % 97 == 1


def spanish_dni_valid(value: str) -> bool:
    """DNI 12345678Z / NIE X1234567L: number mod 23 indexes the control letter."""
    value = value.upper()
    prefix = {"X": "0", "Y": "1", "Z": "2"}.get(value[0])
    number = (prefix + value[1:-1]) if prefix else value[:-1]
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == value[-1]


def dutch_bsn_valid(digits: str) -> bool:
    """BSN 11-test: 9*d1 + 8*d2 + ... + 2*d8 - d9 is a multiple of 11."""
    if len(digits) != 9 or digits == "000000000":
        return False
    total = sum(int(d) * w for d, w in zip(digits[:8], range(9, 1, -1), strict=True)) - int(digits[8])
    return total % 11 == 0


def finnish_hetu_valid(value: str) -> bool:
    """HETU DDMMYYCZZZQ: the 9 digits mod 31 index the control character."""
    digits = value[:6] + value[7:10]
    return "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(digits) % 31] == value[10].upper()


def chinese_resident_id_valid(value: str) -> bool:
    """GB 11643 / ISO 7064 MOD 11-2 over the first 17 digits."""
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    total = sum(int(d) * w for d, w in zip(value[:17], weights, strict=True))
    return "10X98765432"[total % 11] == value[17].upper()


def us_ssn_plausible(area: str, group: str, serial: str) -> bool:
    """SSNs have no check digit; these ranges are never issued."""
    return area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000"

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


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def verhoeff_valid(digits: str) -> bool:
    """Indian Aadhaar numbers: the Verhoeff dihedral check over every digit."""
    check = 0
    for position, char in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[position % 8][int(char)]]
    return check == 0


def german_tax_id_valid(digits: str) -> bool:
    """Steuerliche Identifikationsnummer: 11 digits, no leading 0, ISO 7064 MOD 11,10 check digit,
    and in the first ten one digit twice or three times (the others at most once)."""
    if len(digits) != 11 or digits[0] == "0":
        return False
    counts = sorted((digits[:10].count(d) for d in set(digits[:10])), reverse=True)
    if counts[0] not in (2, 3) or (len(counts) > 1 and counts[1] > 1):
        return False
    product = 10
    for char in digits[:10]:
        total = (int(char) + product) % 10 or 10
        product = (total * 2) % 11
    return (11 - product) % 10 == int(digits[10])


def icao_check_digit(value: str) -> int:
    """ICAO 9303 (German ID card numbers): weights 7, 3, 1; letters count 10..35."""
    return sum(int(c, 36) * (7, 3, 1)[i % 3] for i, c in enumerate(value.upper())) % 10


_CF_ODD_DIGITS = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21]  # the value of 0..9 at an odd position
_CF_ODD_LETTERS = [
    1,
    0,
    5,
    7,
    9,
    13,
    15,
    17,
    19,
    21,
    2,
    4,
    18,
    20,
    11,
    3,
    6,
    8,
    12,
    14,
    16,
    10,
    22,
    25,
    24,
    23,
]


def italian_fiscal_code_valid(code: str) -> bool:
    """Codice fiscale: the 16th letter from the first 15 characters (odd positions by a table,
    even ones by their value: 0..9, A..Z = 0..25), mod 26."""
    code = code.upper()
    total = 0
    for position, char in enumerate(code[:15]):
        value = int(char) if char.isdigit() else ord(char) - ord("A")
        if position % 2 == 0:  # the 1st, 3rd, ... character
            value = _CF_ODD_DIGITS[value] if char.isdigit() else _CF_ODD_LETTERS[value]
        total += value
    return chr(ord("A") + total % 26) == code[15]


def snils_valid(value: str) -> bool:
    """Russian СНИЛС: 11 digits, the first nine weighted 9..1, the sum mod 101 (100 as 00) the
    last two."""
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 11 or len(value) - len(digits) > 4:
        return False
    total = sum(int(d) * w for d, w in zip(digits[:9], range(9, 0, -1), strict=True))
    return total % 101 % 100 == int(digits[9:])


def emirates_id_valid(value: str) -> bool:
    """UAE Emirates ID: 784-YYYY-NNNNNNN-C, 15 digits, Luhn."""
    digits = "".join(c for c in value if c.isdigit())
    return len(digits) == 15 and digits.startswith("784") and luhn_valid(digits)


def clabe_valid(value: str) -> bool:
    """Mexican CLABE: 18 digits; weights 3, 7, 1 over the first 17, each product mod 10."""
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 18 or len(value) - len(digits) > 5:
        return False
    total = sum(int(d) * (3, 7, 1)[i % 3] % 10 for i, d in enumerate(digits[:17]))
    return (10 - total % 10) % 10 == int(digits[17])

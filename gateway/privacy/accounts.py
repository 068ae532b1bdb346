"""Bank accounts without an IBAN: a UK sort code with its account, a US routing number (ABA
check digit, python-stdnum) with its account, a Japanese 口座番号, and an account number named
as one in the 13 languages. An account number has no check digit of its own: the words around
it say what it is (a routing number or a sort code alone is a bank's, not a person's)."""

import re

from stdnum.us import rtn

_SORT_CODE = r"\d{2}[- ]?\d{2}[- ]?\d{2}"
ACCOUNT_WORDS = (
    r"account (?:number|no\.?|#)|acct(?:\.| no\.?| #| number)|bank account|kontonummer|kontonr\.?"
    r"|numéro de compte|n° de compte|número de cuenta|nº de cuenta|número da conta|numero di conto"
    r"|conto corrente n\.?|rekeningnummer|номер сч[её]та|расч[её]тный сч[её]т|лицевой сч[её]т"
    r"|a/c(?: no\.?)?|खाता संख्या|खाता नंबर|खाता सं\.?|رقم الحساب"
    r"|银行账号|银行账户|账号|帳號|口座番号|계좌번호|계좌|은행"
    r"|iban|cbu|clabe|(?:money |wire |bank )?transfer (?:from|to)|überweisung (?:von|an|auf)"
    r"|virement (?:de|à|sur)"
)
UK_ACCOUNT = re.compile(
    rf"(?i:sort[ -]?code)[^\n\d]{{0,16}}{_SORT_CODE}(?!\d)[^\n\d]{{0,40}}(?<!\d)\d{{8}}(?!\d)"
    rf"|(?i:account)[^\n\d]{{0,16}}\d{{8}}(?!\d)[^\n\d]{{0,40}}"
    rf"(?i:sort[ -]?code)[^\n\d]{{0,16}}{_SORT_CODE}(?!\d)"
)
US_ACCOUNT = re.compile(
    r"(?i:routing|aba|rtn)[^\n\d]{0,16}(?P<routing>\d{9})(?!\d)[^\n\d]{0,40}(?i:account|acct)[^\n\d]{0,16}\d{4,17}(?!\d)"
    r"|(?i:account|acct)[^\n\d]{0,16}\d{4,17}(?!\d)[^\n\d]{0,40}(?i:routing|aba|rtn)[^\n\d]{0,16}(?P<after>\d{9})(?!\d)"
)
JP_ACCOUNT = re.compile(r"(?:支店|店番)[^\n]{0,30}?(?:普通|当座|貯蓄)[^\n\d]{0,8}\d{7}(?!\d)")
NAMED_ACCOUNT = re.compile(
    rf"(?i:{ACCOUNT_WORDS})[^\n\d]{{0,16}}(?<!\d)\d{{2,6}}(?:[ ./-]?\d{{2,16}}){{0,4}}(?!\d)"
)


def us_account(match: re.Match) -> bool:
    return rtn.is_valid(match.group("routing") or match.group("after"))


def named_account(match: re.Match) -> bool:
    """Eight digits at least: shorter is a customer or branch number. Digits right after a
    letter ("iban de89 ...") are an IBAN's, which its own check decides."""
    digits = re.sub(r"\D", "", match.group())
    first_digit = re.search(r"\d", match.group()).start()
    return len(digits) >= 8 and not match.group()[first_digit - 1].isalpha()


PATTERNS = [  # (kind, pattern, validator, literals one of which a match holds, folded)
    ("bank_account", UK_ACCOUNT, lambda match: True, ("sort",)),
    ("bank_account", US_ACCOUNT, us_account, ("routing", "aba", "rtn")),
    ("bank_account", JP_ACCOUNT, lambda match: True, ("支店", "店番")),
    (
        "bank_account",
        NAMED_ACCOUNT,
        named_account,
        ("account", "acct", "konto", "compte", "cuenta", "conta", "conto", "rekening", "сч", "खाता",
         "الحساب", "账号", "账户", "帳號", "口座番号", "계좌", "은행", "a/c", "खाता", "iban", "cbu", "clabe",
         "transfer", "überweisung", "virement"),
    ),
]  # fmt: skip

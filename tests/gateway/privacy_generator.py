"""A seeded generator of labelled privacy cases: identifiers made by Faker and python-stdnum in
every form people write them (spaced, dashed, split over lines or by words, other scripts'
digits, full width, spelled out, obfuscated e-mail), each set in a sentence of one of seven
languages. `positives()` -> [(kind, language, text)]; `near_misses()` -> [(kind, language, text)]."""

import random

from faker import Faker
from stdnum import luhn, verhoeff
from stdnum.jp import in_ as my_number
from stdnum.kr import rrn

from tests.gateway.privacy_forms import LANGUAGES, LOCALE, digits, frame
from tests.gateway.privacy_free_text import clinical_cases, free_text_cases

PHONES = {  # realistic national forms (Faker's are not all dialable)
    "CN": ["1{a}{d1} {d4} {e4}", "1{a}{d1}-{d4}-{e4}", "1{a}{d1}{d4}{e4}", "+86 1{a}{d1} {d4} {e4}", "010-{d4}{e4}"],
    "JP": ["090-{d4}-{e4}", "03-{d4}-{e4}", "+81 90 {d4} {e4}", "080 {d4} {e4}"],
    "KR": ["010-{d4}-{e4}", "02-{d3}-{d4}", "+82 10 {d4} {e4}", "010 {d4} {e4}"],
    "DE": ["030 {d4}{e4}", "0151 {d4}{e4}", "+49 30 {d4}{e4}", "030/{d4}{d3}", "0176-{d4}{d3}"],
    "FR": ["01 {d2} {d2} {d2} {d2}", "06 {d2} {d2} {d2} {d2}", "+33 6 {d2} {d2} {d2} {d2}", "07.{d2}.{d2}.{d2}.{d2}"],
    "GB": ["07700 900{d3}", "020 7946 0{d3}", "+44 7700 900{d3}", "0161 496 0{d3}"],
    "US": ["(415) 555-{d4}", "212-{d3}-{d4}", "+1 646 {d3} {d4}", "617.{d3}.{d4}"],
    "IN": ["98765 {d2}{d3}", "+91 98{d3} {d2}{d3}", "022 {d4} {e4}"],
}  # fmt: skip
PHONE_WORDS = {
    "en": "call",
    "zh": "电话",
    "de": "Telefon",
    "fr": "tél.",
    "es": "teléfono",
    "ja": "電話",
    "ko": "전화",
}
DIGIT_SCRIPTS = {"arabic-indic": 0x0660, "devanagari": 0x0966, "full-width": 0xFF10, "bengali": 0x09E6}
SPELLED = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
FILLERS = [" then ", " and ", " und ", " puis ", " y ", "然后", " next "]
EMAIL_FORMS = [
    lambda u, d: f"{u}@{d}",
    lambda u, d: f"{u} at {d.replace('.', ' dot ')}",
    lambda u, d: f"{u.replace('.', ' dot ')} at {d.replace('.', ' dot ')}",
    lambda u, d: f"{u}[at]{d.replace('.', '[dot]')}",
    lambda u, d: f"{u} (at) {d.replace('.', ' (dot) ')}",
    lambda u, d: f"{u}&#64;{d}",
    lambda u, d: f"{u}%40{d}",
    lambda u, d: f"{u} [at] {d}",
    lambda u, d: f"{u}＠{d}",
    lambda u, d: f"{u}{{at}}{d.replace('.', '{dot}')}",
]


def _script(text: str, base: int) -> str:
    return "".join(chr(base + int(c)) if c.isdigit() else c for c in text)


def _groups(number: str, size: int = 4) -> list[str]:
    return [number[i : i + size] for i in range(0, len(number), size)]


def _dress_number(rng: random.Random, number: str, form: str) -> str:
    """A long number (card, IBAN digits) written in one of the forms people use."""
    groups = _groups(number)
    if form == "spaced":
        return " ".join(groups)
    if form == "dashed":
        return "-".join(groups)
    if form == "two lines":
        half = len(groups) // 2
        return " ".join(groups[:half]) + "\n" + " ".join(groups[half:])
    if form == "words":
        return rng.choice(FILLERS).join(groups)
    if form == "en-dash":
        return "–".join(groups)
    if form == "underscores":
        return "_".join(groups)
    if form == "zero-width":
        return "\u200b".join(groups)
    if form == "spelled":
        return " ".join(SPELLED[int(c)] for c in number)
    if form in DIGIT_SCRIPTS:
        return _script(" ".join(groups), DIGIT_SCRIPTS[form])
    return number


CARD_FORMS = [
    "plain",
    "spaced",
    "dashed",
    "two lines",
    "words",
    "en-dash",
    "underscores",
    "zero-width",
    "spelled",
]
CARD_FORMS += list(DIGIT_SCRIPTS)


def _card(fake: Faker) -> str:
    while True:
        number = fake.credit_card_number()
        if 13 <= len(number) <= 19:
            return number


def _rrn(rng: random.Random) -> str:
    """A Korean resident registration number with a real birth date and its check digit."""
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.choice('12')}{digits(rng, 5)}"
    return f"{body[:6]}-{body[6:]}{rrn.calc_check_digit(body)}"


def _aadhaar(rng: random.Random) -> str:
    body = rng.choice("23456789") + digits(rng, 10)
    return body + verhoeff.calc_check_digit(body)


def _phone(rng: random.Random, country: str) -> str:
    pattern = rng.choice(PHONES[country])
    return pattern.format(
        a=rng.choice("3456789"), d1=digits(rng, 1), d2=digits(rng, 2), d3=digits(rng, 3), d4=digits(rng, 4),
        e4=digits(rng, 4),
    )  # fmt: skip


def _identifier_cases(rng: random.Random, fakes: dict[str, Faker]) -> list[tuple[str, str, str]]:
    cases = []
    for i in range(40):
        language = LANGUAGES[i % 7]
        form = CARD_FORMS[i % len(CARD_FORMS)]
        cases.append(
            ("card_number", language, frame(rng, language, _dress_number(rng, _card(fakes["en"]), form)))
        )
        country = list(PHONES)[i % len(PHONES)]
        phone = _phone(rng, country)
        if i % 5 == 4:
            phone = _script(phone, DIGIT_SCRIPTS["full-width"])
        said = f"{PHONE_WORDS[language]} {phone}" if i % 3 == 0 else phone
        cases.append(("phone", language, frame(rng, language, said)))
        user, domain = (
            fakes[language].user_name(),
            rng.choice(["example.com", "mail.example.org", "beispiel.de"]),
        )
        if i % 3 == 0:
            user = f"{fakes['en'].first_name().lower()}.{fakes['en'].last_name().lower()}"
        cases.append(
            ("email", language, frame(rng, language, EMAIL_FORMS[i % len(EMAIL_FORMS)](user, domain)))
        )
        iban = fakes[rng.choice(["de", "fr", "es"])].iban()
        spaced = " ".join(_groups(iban))
        iban_form = [
            iban,
            spaced,
            spaced.replace(" ", "\n", 1 + i % 3).replace("\n", " ", i % 2),
            iban.lower(),
        ][i % 4]
        cases.append(("iban", language, frame(rng, language, iban_form)))
    return cases


def _national_id_cases(rng: random.Random, fakes: dict[str, Faker]) -> list[tuple[str, str, str]]:
    cases = []
    for i in range(25):
        language = LANGUAGES[i % 7]
        cases.append(("cn_resident_id", "zh", f"身份证号{fakes['zh'].ssn()}，请登记"))
        rrn = _rrn(rng)
        cases.append(("kr_rrn", "ko", f"주민등록번호 {rrn if i % 2 else rrn.replace('-', '')} 확인 바랍니다"))
        body = digits(rng, 11)
        number = body + str(my_number.calc_check_digit(body))
        written = " ".join(_groups(number)) if i % 2 else number
        cases.append(("jp_my_number", "ja", f"マイナンバーは{written}です"))
        cpf = fakes["pt"].cpf()
        cases.append(("br_cpf", "pt", f"Meu CPF é {cpf if i % 2 else cpf.replace('.', '').replace('-', '')}"))
        nir = fakes["fr"].ssn()
        nir_form = (
            f"{nir[0]} {nir[1:3]} {nir[3:5]} {nir[5:7]} {nir[7:10]} {nir[10:13]} {nir[13:]}" if i % 2 else nir
        )
        cases.append(("fr_nir", "fr", f"Mon numéro de sécurité sociale : {nir_form}"))
        bsn = fakes["nl"].ssn()
        bsn_form = [bsn, f"{bsn[:4]}.{bsn[4:6]}.{bsn[6:]}", f"{bsn[:3]} {bsn[3:6]} {bsn[6:]}"][i % 3]
        cases.append(("nl_bsn", "nl", f"BSN {bsn_form}, graag controleren"))
        cases.append(("us_ssn", "en", frame(rng, "en", f"SSN {fakes['en'].ssn()}")))
        cases.append(("es_dni", "es", f"Mi DNI es {fakes['es'].nif()}"))
        cases.append(("it_fiscal_code", "it", f"Codice fiscale {fakes['it'].ssn()}"))
        aadhaar = _aadhaar(rng)
        cases.append(("in_aadhaar", "en", f"Aadhaar {' '.join(_groups(aadhaar)) if i % 2 else aadhaar}"))
        cases.append(
            (
                "mac_address",
                language,
                frame(
                    rng, language, fakes["en"].mac_address().upper() if i % 2 else fakes["en"].mac_address()
                ),
            )
        )
        cases.append(
            (
                "ip_address",
                language,
                frame(
                    rng,
                    language,
                    fakes["en"].ipv4_public() if i % 2 else f"2a0{i % 10}:{fakes['en'].ipv6()[5:]}",
                ),
            )
        )
        passport = fakes["en"].passport_number()
        label = {
            "en": "passport",
            "zh": "护照号码",
            "de": "Reisepass",
            "fr": "passeport",
            "es": "pasaporte",
            "ja": "旅券番号",
            "ko": "여권번호",
        }[language]
        cases.append(("passport", language, frame(rng, language, f"{label} {passport}")))
    return cases


def fakes_for(seed: int) -> dict[str, Faker]:
    locales = {**LOCALE, "pt": "pt_BR", "nl": "nl_NL", "it": "it_IT", "in": "en_IN"}
    fakes = {}
    for language, locale in locales.items():
        fakes[language] = Faker(locale)
        fakes[language].seed_instance(seed)
    return fakes


def positives(seed: int = 20261206) -> list[tuple[str, str, str]]:
    rng, fakes = random.Random(seed), fakes_for(seed)
    cases = _identifier_cases(rng, fakes) + _national_id_cases(rng, fakes) + free_text_cases(rng, fakes)
    return cases + clinical_cases(rng)


def near_misses(seed: int = 20261206) -> list[tuple[str, str, str]]:
    """Numbers and texts that look like personal data and are not."""
    rng, fake = random.Random(seed), fakes_for(seed)["en"]
    cases = []
    for i in range(20):
        language = LANGUAGES[i % 7]
        cases.append(("order_number", language, frame(rng, language, f"order #{digits(rng, 9)}")))
        cases.append(("isbn", language, frame(rng, language, f"ISBN {fake.isbn13()}")))
        cases.append(
            (
                "version",
                language,
                frame(
                    rng, language, f"version {rng.randint(1, 30)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}"
                ),
            )
        )
        cases.append(("uuid", language, frame(rng, language, fake.uuid4())))
        cases.append(("git_sha", language, frame(rng, language, f"commit {fake.sha1()}")))
        cases.append(
            (
                "private_ip",
                language,
                frame(
                    rng,
                    language,
                    rng.choice(
                        [
                            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                            f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                            "127.0.0.1",
                            f"172.16.{rng.randint(0, 255)}.1",
                        ]
                    ),
                ),
            )
        )
        cases.append(("date", language, frame(rng, language, fake.date())))
        bad_card = _card(fake)
        bad_card = bad_card[:-1] + next(d for d in "0123456789" if not luhn.is_valid(bad_card[:-1] + d))
        cases.append(("bad_luhn", language, frame(rng, language, " ".join(_groups(bad_card)))))
        cases.append(
            (
                "price",
                language,
                frame(rng, language, f"{rng.randint(1, 99999):,}.{rng.randint(0, 99):02d} USD"),
            )
        )
        cases.append(
            ("timestamp", language, frame(rng, language, str(rng.randint(1_600_000_000, 1_800_000_000))))
        )
    return cases

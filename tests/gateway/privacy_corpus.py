"""A labelled corpus for the personal-data recognizers: what must be found (each with its kind)
and near misses that must not be, including every case a black-box probe sent to the cloud."""

from gateway.privacy import checksums


def _aadhaar() -> tuple[str, str]:
    """A 12-digit number whose last digit makes it Verhoeff-valid (the check itself is tested
    against the published vector 2363), and the same number with another last digit (one that
    is not a Luhn-valid Swedish personnummer either: 12 digits are one too)."""
    body = "23412341234"
    valid = next(body + d for d in "0123456789" if checksums.verhoeff_valid(body + d))
    other = next(
        body + d
        for d in "0123456789"
        if not checksums.verhoeff_valid(body + d) and not checksums.luhn_valid((body + d)[-10:])
    )
    return valid, other


AADHAAR, NOT_AADHAAR = _aadhaar()

POSITIVES = [
    ("card_number", "card 4539.1488.0343.6467 expires"),
    ("card_number", "card 4539/1488/0343/6467"),
    ("card_number", "card 4539\u200b1488\u200b0343\u200b6467"),  # zero-width spaces
    ("card_number", "card ４５３９ １４８８ ０３４３ ６４６７"),  # full-width digits
    ("iban", "iban de89 3704 0044 0532 0130 00"),
    ("iban", "IBAN DE89-3704-0044-0532-0130-00"),
    ("iban", "DE89 3704 0044 0532 0130 00 COBADEFFXXX"),  # followed by the BIC
    ("us_ssn", "SSN 123 45 6789"),
    ("us_ssn", "my SSN is 123456789"),
    ("us_ssn", "social security number: 123456789"),
    ("credential", "secret_key=abcd1234efgh"),
    ("credential", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("credential", "my password is hunter2"),
    ("credential", "Mein Passwort ist Sommer2024"),
    ("github_token", "ghp_" + "A1b2C3d4" * 5),
    ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"),
    ("api_key", "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("api_key", "maps AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"),
    ("private_key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF..."),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk..."),
    ("private_key", "-----BEGIN ENCRYPTED PRIVATE KEY-----"),
    ("email", "write to jürgen.müller@beispiel.de"),
    ("email", "write to ＪＡＮＥ＠ＥＸＡＭＰＬＥ．ＣＯＭ"),  # full-width
    ("phone", "call 0049 30 12345678"),
    ("phone", "Tel. 030/12345678"),
    ("cn_resident_id", "ID 110105 19491231 002X"),
    ("de_id_card", "Ausweisnummer T220001293"),
    ("de_tax_id", "Steuer-ID 86 095 742 719"),
    ("de_tax_id", "IdNr 86095742719"),
    ("uk_nino", "NINO AB 12 34 56 C"),
    ("uk_nino", "national insurance ab123456c"),
    ("it_fiscal_code", "codice fiscale RSSMRA85T10A562S"),
    ("in_aadhaar", f"Aadhaar {AADHAAR[:4]} {AADHAAR[4:8]} {AADHAAR[8:]}"),
    ("in_aadhaar", f"Aadhaar {AADHAAR}"),
]

NEAR_MISSES = [
    "version 1.2.3.4 is out",
    "upgrade to v 10.0.0.1 today",
    "card 4539.1488.0343.6468 (bad Luhn)",
    "iban de89 3704 0044 0532 0130 01 (bad mod 97)",
    "SSN-like 123 45 678",
    "order number 123456789 shipped",  # nine digits, no SSN context: not an SSN
    "IdNr 86095742718 (bad check digit)",
    "Ausweis T220001294 (bad check digit)",
    "codice RSSMRA85T10A562T (bad check letter)",
    "NINO GB123456A (a prefix never issued)",
    f"Aadhaar {NOT_AADHAAR}",
    "the password manager is great",
    "gh_pages branch and sk-learn",
    "000-12-3456",
    "see page 030 and 12345",
]

"""Values published as examples: the test cards of payment providers' documentation (Stripe,
Adyen, Braintree, PayPal), AWS's documented example keys, the IBAN registry's and banks' example
IBANs, the SSN the SSA voided after it was printed in wallets (078-05-1120).

Such a value is nobody's, but people paste real numbers next to the same words, so it is public
only where the text says it is an example: a test, sample, dummy, sandbox or documentation word
in the 13 languages, or code fences. "my card is 4111 1111 1111 1111" stays private.
"""

import re

PUBLISHED_EXAMPLES = frozenset({
    # test cards (Stripe, Adyen, Braintree, PayPal sandbox documentation)
    "4242424242424242", "4000056655665556", "5555555555554444", "2223003122003222", "5200828282828210",
    "5105105105105100", "378282246310005", "371449635398431", "6011111111111117", "6011000990139424",
    "3056930009020004", "36227206271667", "3566002020360505", "6200000000000005", "4111111111111111",
    "4012888888881881", "4222222222222", "5431111111111111", "6011601160116611", "378734493671000",
    "30569309025904", "38520000023237", "3530111333300000", "4000000000000002", "4000000000009995",
    "4000000000000077", "4000002500003155", "4000000000003220", "4917610000000000", "5454545454545454",
    # AWS documentation's example access key and secret
    "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    # example IBANs (SWIFT IBAN registry, banks' documentation)
    "DE89370400440532013000", "GB82WEST12345698765432", "GB29NWBK60161331926819",
    "FR1420041010050500013M02606", "NL91ABNA0417164300", "ES9121000418450200051332",
    "IT60X0542811101000000123456", "BE68539007547034", "CH9300762011623852957",
    "AT611904300234573201",
    # the SSN printed on wallet inserts in 1938, voided by the SSA; the one of forms and ads
    # (Presidio's us_ssn recognizer drops it)
    "078051120", "123456789",
})  # fmt: skip
EXAMPLE_WORDS = re.compile(  # a word, not a domain's part (jane@example.com)
    r"(?i)(?<![@.\w])(?:test(?:ing)?|sample|example|dummy|sandbox|fake|placeholder|documentation|docs"
    r"|stripe|beispiel|testdaten|exemple|ejemplo|prueba|exemplo|esempio|voorbeeld)\b(?!\.\w)"
    r"|(?<=[_-])(?:test|example|sample|dummy|fake)\b|\b(?:def|assert|const|let|var|function|import|raise)\b"
    r"|```|пример|тестов|示例|测试|例えば|サンプル|テスト|예시|테스트|उदाहरण|परीक्षण|مثال|تجريبي"
)
# the names forms, manuals and tests put for anyone: John Doe and his like in our 13 languages
DUMMY_NAMES = frozenset({
    "john doe", "jane doe", "john smith", "joe bloggs", "max mustermann", "erika mustermann",
    "jean dupont", "marie dupont", "juan pérez", "juan perez", "fulano de tal", "mario rossi",
    "jan jansen", "jan modaal", "иван иванов", "иван иванович иванов", "иванов иван иванович",
    "张三", "李四", "王五", "山田太郎", "山田 太郎", "山田花子", "山田 花子", "홍길동", "김철수",
    "राम कुमार", "فلان الفلاني", "joão da silva", "josé da silva", "maria da silva",
})  # fmt: skip
_SEPARATORS = re.compile(r"[^A-Za-z0-9]")


def is_published_example(value: str, text: str) -> bool:
    """A published example value, in a text that says it speaks of examples or tests."""
    return _SEPARATORS.sub("", value) in PUBLISHED_EXAMPLES and EXAMPLE_WORDS.search(text) is not None


def is_dummy_name(name: str) -> bool:
    return " ".join(name.casefold().split()) in DUMMY_NAMES

"""The `strict` privacy mode's second test, for regulated tenants: a request the detectors call
clean leaves on-prem only when it is also confidently public, with no person reference of any
kind (a name, a relationship, a role, the sender speaking of themselves; public figures aside)
and no identifier-shaped token (six digits or more in one number, an e-mail-like address, a
long code mixing letters and digits), whether or not a check digit or a sensitive word says so.
"""

import re

from gateway.privacy.free_text import RECORD_WORDS, masked_placeholders, public_figure
from gateway.privacy.names import person_spans
from gateway.privacy.normalize import normalize

_NUMBER = re.compile(r"\d(?:[ ./-]?\d){5,}")
_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{2,63}")
_CODE = re.compile(r"[A-Za-z0-9_+/=-]{16,}")


def strict_findings(text: str) -> tuple[str, ...]:
    """The kinds ("person_reference", "identifier_shape") that keep `text` on-prem in strict mode."""
    text = normalize(text)
    kinds = []
    masked = masked_placeholders(text)
    has_records = RECORD_WORDS.search(text) is not None
    if any(not public_figure(masked, span, has_records) for span in person_spans(masked)):
        kinds.append("person_reference")
    if _NUMBER.search(text) or _EMAIL.search(text) or any(_is_code(m.group()) for m in _CODE.finditer(text)):
        kinds.append("identifier_shape")
    return tuple(kinds)


def _is_code(token: str) -> bool:
    return any(char.isdigit() for char in token) and any(char.isalpha() for char in token)

"""Cases from elsewhere: labelled prompts built only from other people's material, never from
text written about our detector. Each part names its origin in `Case.source`:

- stdnum_ids.py: python-stdnum's own doctest examples, person identifiers private, product and
  company identifiers public;
- phone_numbers.py: libphonenumber's example number for every region and number type, personal
  types private, service types (toll-free, premium, shared cost, UAN, voicemail) public;
- faker_locales.py: Faker in every locale (name, address, phone, ssn);
- presidio_generated.py: presidio-evaluator's sentence generator, labelled by its own spans;
- secret_shapes.py: strings detect-secrets' plugins flag, drawn from their own regexes;
- outside.py: prompts written by someone who never read the detector (privacy_outside/*.jsonl).

The carrier sentences are presidio-evaluator's templates (carriers.py); only where a template has
no slot for a kind (a national id, a product code, a code line) is a neutral label used.
"""

import functools

from tests.gateway.privacy_thirdparty.case import Case
from tests.gateway.privacy_thirdparty.faker_locales import faker_cases
from tests.gateway.privacy_thirdparty.outside import outside_cases
from tests.gateway.privacy_thirdparty.phone_numbers import phone_cases
from tests.gateway.privacy_thirdparty.presidio_generated import presidio_cases
from tests.gateway.privacy_thirdparty.secret_shapes import secret_cases
from tests.gateway.privacy_thirdparty.stdnum_ids import stdnum_cases


@functools.cache
def thirdparty_cases() -> tuple[Case, ...]:
    """Every generated third-party case (deterministic: seeded, in a fixed order)."""
    return (*stdnum_cases(), *phone_cases(), *faker_cases(), *presidio_cases(), *secret_cases())


def elsewhere_cases() -> tuple[Case, ...]:
    """The third-party cases and the outside corpus: the part a kind's recall is believed on."""
    return (*thirdparty_cases(), *outside_cases())


__all__ = ["Case", "elsewhere_cases", "outside_cases", "thirdparty_cases"]

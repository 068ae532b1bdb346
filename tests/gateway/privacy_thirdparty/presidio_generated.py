"""presidio-evaluator's own sentence generator (PresidioSentenceFaker, en_US, seeded), labelled by
the entity spans it reports. Its output is stored in presidio_generated.jsonl: importing the
generator loads spaCy and presidio-analyzer (~10 s), too slow for every test run; and its seed
does not fix every draw, so a regenerated file differs (not in kind). Regenerate with

    python -m tests.gateway.privacy_thirdparty.presidio_generated

Private: a sentence with a card, IBAN, SSN, driver's license, e-mail, phone, IP or street address,
or a person's full name (two words or more; one given name or surname alone identifies nobody);
names and addresses only outside the templates about public figures, businesses and public places
(carriers.py: PUBLIC_CONTEXT). Public: a sentence whose only entities (if any) are
places and organisations. The rest (a date, an age, a nationality, a title alone) is left out."""

import json
from pathlib import Path

from tests.gateway.privacy_thirdparty.carriers import about_private_person
from tests.gateway.privacy_thirdparty.case import Case

STORED = Path(__file__).with_name("presidio_generated.jsonl")
SEED, NUM_SAMPLES = 61, 800
KIND_OF = {  # presidio entity -> kind, in the order a sentence's kind is chosen
    "CREDIT_CARD": "card",
    "IBAN_CODE": "bank_account",
    "US_SSN": "ssn",
    "US_DRIVER_LICENSE": "driver_license",
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "IP_ADDRESS": "ip_address",
    "STREET_ADDRESS": "address",
    "PERSON": "name",
}
PUBLIC_ENTITIES = {"GPE", "ORGANIZATION"}


def label(sample: dict) -> tuple[str, bool] | None:
    """(kind, private) for a stored sample, None when it is neither clearly private nor public."""
    entities = set()
    personal = about_private_person(sample["masked"])
    for entity, value in sample["spans"]:
        if entity in ("PERSON", "STREET_ADDRESS") and not personal:
            continue
        if entity == "PERSON" and len(value.split()) < 2:
            continue
        entities.add(entity)
    for entity, kind in KIND_OF.items():
        if entity in entities:
            return kind, True
    if {entity for entity, _ in sample["spans"]} <= PUBLIC_ENTITIES:
        return "sentence", False
    return None


def presidio_cases() -> list[Case]:
    cases = []
    for line in STORED.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        labelled = label(sample)
        if labelled is not None:
            source = f"presidio-evaluator PresidioSentenceFaker template {sample['template_id']}"
            cases.append(Case(labelled[0], "en", sample["text"], labelled[1], source))
    return cases


def generate() -> list[dict]:
    from presidio_evaluator.data_generator import PresidioSentenceFaker

    faker = PresidioSentenceFaker("en_US", lower_case_ratio=0.05, random_seed=SEED)
    return [
        {
            "text": sample.full_text,
            "masked": sample.masked,
            "template_id": sample.template_id,
            "spans": [[span.entity_type, span.entity_value] for span in sample.spans],
        }
        for sample in faker.generate_new_fake_sentences(NUM_SAMPLES)
    ]


if __name__ == "__main__":
    lines = [json.dumps(sample, ensure_ascii=False) for sample in generate()]
    STORED.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} samples to {STORED}")

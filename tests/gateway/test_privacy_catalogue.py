"""The person-identifier catalogue (gateway/privacy/catalogue.py): every module it names exists
in python-stdnum and checks its own examples; the STRONG ones earn their place (a random string
of their shape passes at most 1 in 300 times); its words come from the modules' docstrings."""

import importlib
import random

import pytest

from gateway.privacy.catalogue import PERSON_IDS, STRONG, catalogue, docstring_words, fold

STRONG_RATE = 1 / 300


@pytest.mark.parametrize("name", sorted(PERSON_IDS))
def test_every_person_module_exists_and_is_catalogued(name):
    module = importlib.import_module(f"stdnum.{name}")
    assert callable(module.is_valid)
    kind = name.replace(".", "_").replace("__", "_")
    assert any(kind in {i.kind for i in ids} for ids in catalogue().word_to_ids.values()), kind


@pytest.mark.parametrize("name", sorted(STRONG - {"cn.ric"}))
def test_strong_modules_pass_few_random_strings_of_their_shape(name):
    kind = name.replace(".", "_").replace("__", "_")
    person_id = next(i for ids in catalogue().length_to_strong.values() for i in ids if i.kind == kind)
    rng = random.Random(61)
    for length in person_id.lengths:
        hits = sum(
            person_id.is_valid("".join(rng.choice("0123456789") for _ in range(length))) for _ in range(3000)
        )
        assert hits / 3000 <= STRONG_RATE, (name, length, hits)


def test_words_come_from_docstrings():
    assert docstring_words("SIN (Canadian Social Insurance Number).")[0] == "SIN"
    assert docstring_words("CC (Número de Cartão de Cidadão, Portuguese Identity number).") == (
        "Número de Cartão de Cidadão",
    )  # two letters name too much
    assert "Идентификационный номер налогоплательщика" in docstring_words(
        "ИНН (Идентификационный номер налогоплательщика, Russian tax identifier)."
    )
    words = catalogue().word_to_ids
    assert {i.kind for i in words[fold("ИНН")]} >= {"ru_inn"}
    assert {i.kind for i in words[fold("Social Insurance Number")]} == {"ca_sin"}

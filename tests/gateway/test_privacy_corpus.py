"""The labelled corpus (tests/gateway/privacy_corpus.py), the published check-digit vectors, and
linear time: hostile texts that made patterns retry from every position are scanned in bounded
time, and a long scan leaves the event loop serving."""

import asyncio
import time

import pytest

from gateway.privacy import PrivacyMode, checksums, classify_async, find_personal_data
from gateway.privacy.recognizers import RECOGNIZERS, find_personal_data_ungated
from tests.gateway.privacy_corpus import NEAR_MISSES, POSITIVES


@pytest.mark.parametrize(("kind", "text"), POSITIVES)
def test_every_positive_is_found_as_its_kind(kind, text):
    assert kind in {finding.kind for finding in find_personal_data(text)}, text


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_no_near_miss_is_found(text):
    assert find_personal_data(text) == []


def test_check_digits_against_published_vectors():
    assert checksums.verhoeff_valid("2363") and not checksums.verhoeff_valid("2364")
    assert checksums.german_tax_id_valid("86095742719")
    assert checksums.icao_check_digit("T22000129") == 3  # the specimen ID card, T220001293
    assert checksums.italian_fiscal_code_valid("RSSMRA85T10A562S")


HOSTILE = {  # 100,000 characters each
    "dashes after an at sign": "@ " + "-" * 100_000,
    "word then at sign": "a" * 100_000 + "@",
    "dotted labels": "a@" + "a." * 50_000,
    "hex and colons": "a:" * 50_000,
    "jwt heads": "eyJ-" * 25_000,
    "api key heads": "sk-" * 35_000 + " ",
    "slack heads": "xoxa-" * 20_000,
    "separated digits": "1-" * 50_000,
    "dotted digits": "1." * 50_000,
    "spaced digits": "1 " * 50_000,
    "keywords": "password=" * 11_000,
    "ssn context": "ssn " * 25_000,
    "spelled digits": "one " * 25_000,
    "capitalized words": "Jane " * 20_000,
    "at and dot words": "a at b dot " * 9_000,
    "han characters": "张伟" * 50_000,
    "digits and long dashes": "1ー" * 50_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_texts_are_scanned_in_linear_time(name):
    """100,000 characters: linear patterns take well under a second here; the quadratic ones
    they replace took 13 s on the first of these at this length (and 4x that at twice it)."""
    text = HOSTILE[name]
    for recognizer in RECOGNIZERS:
        started = time.perf_counter()
        list(recognizer.pattern.finditer(text))
        assert time.perf_counter() - started < 1.0, recognizer.kind
    started = time.perf_counter()
    find_personal_data_ungated(text)
    assert time.perf_counter() - started < 5.0


async def test_a_long_scan_leaves_the_event_loop_serving():
    text = ("ordinary prose with numbers 12 34 and words, " * 20_000)[:500_000]
    gaps, stop = [], asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    decision = await classify_async([text], PrivacyMode.AUTO, None)
    stop.set()
    await ticking
    # on the loop, the ticker would not run until the scan ended (one gap); on a worker thread
    # it keeps its turns however fast this machine scans
    assert decision.reason == "clean" and len(gaps) >= 3
    assert max(gaps) < 0.25

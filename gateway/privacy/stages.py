"""The detector stages and whether each runs. A stage that cannot run (its package missing, its
data unreadable) is reported by /health/ready and the status page, and while any stage is off
every `auto` request is private (gateway/privacy/__init__.py)."""

import functools

from gateway.privacy.address_anchors import street_words
from gateway.privacy.free_text import VERSION as FREE_TEXT_VERSION
from gateway.privacy.names import gazetteers, name_index

VERSIONS = {"patterns": "patterns-3", "free_text": FREE_TEXT_VERSION}


@functools.cache
def stage_status() -> dict[str, str]:
    """name -> "ok" or "off: <why>" (checked once per process)."""
    status = {}
    for name, check in (("patterns", _patterns), ("free_text", _free_text)):
        try:
            check()
            status[name] = "ok"
        except Exception as error:  # any failure turns the stage off; requests then fail closed
            status[name] = f"off: {type(error).__name__}: {error}"
    return status


def all_running() -> bool:
    return all(state == "ok" for state in stage_status().values())


def _patterns() -> None:
    from gateway.privacy.recognizers import find_personal_data

    if not find_personal_data("card 4111 1111 1111 1111, tel +44 20 7946 0958"):
        raise RuntimeError("the pattern stage found nothing in its self-test")


def _free_text() -> None:
    """Faker's name and street lists and the name index (built on first start: ~1 minute, once)."""
    gazetteers()
    name_index()
    street_words()

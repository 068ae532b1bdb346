"""Decide whether a request is private: by key, by header, or because it carries personal data.

Fail closed: if detection itself fails, is off (gateway/privacy/stages.py) or takes longer than
SCAN_TIMEOUT_S, the request is private; so is one with images in `auto` mode (the detectors read
text: an image's content is not scanned), unless its key's privacy mode is `public`. In `strict`
mode a request is also private when it names anyone or holds an identifier-shaped token
(gateway/privacy/strict.py): only the confidently public leave on-prem.
"""

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from gateway.core.off_loop import INLINE_CHARS, off_loop
from gateway.privacy.recognizers import Finding, find_personal_data
from gateway.privacy.stages import VERSIONS, all_running, stage_status
from gateway.privacy.strict import strict_findings

logger = logging.getLogger("hybridgw.gateway")
SEPARATOR = "\n\x1e\n"  # between the strings of one request: newline, record separator, newline
OFF_LOOP_CHARS = 1024  # longer texts are scanned on a worker thread (1 KB takes ~5 ms)
SCAN_TIMEOUT_S = 20.0  # a scan still running then makes its request private (a 1 MB prompt takes ~2 s)


class PrivacyMode(StrEnum):
    ALWAYS_PRIVATE = "always_private"
    AUTO = "auto"
    STRICT = "strict"  # auto, and also private with any person reference or identifier-shaped token
    PUBLIC = "public"


@dataclass(frozen=True, slots=True)
class PrivacyDecision:
    is_private: bool
    # "key", "header", "detected", "strict", "detector_error", "detector_off", "detector_timeout",
    # "image", "public", "clean"
    reason: str
    kinds: tuple[str, ...] = field(default_factory=tuple)
    stages: tuple[tuple[str, str], ...] = ()  # the detector stages that decided, with their versions


# the strings, or what computes them (called once, only when the key and header leave it open)
Texts = list[str] | Callable[[], list[str]]


def classify(texts: Texts, mode: PrivacyMode, header: str | None, images: int = 0) -> PrivacyDecision:
    if mode == PrivacyMode.ALWAYS_PRIVATE:
        return PrivacyDecision(True, "key")
    if header is not None and header.strip().lower() == "private":
        return PrivacyDecision(True, "header")
    if mode == PrivacyMode.PUBLIC:
        return PrivacyDecision(False, "public")
    if images:
        return PrivacyDecision(True, "image")
    if not all_running():
        return PrivacyDecision(True, "detector_off")
    try:
        strings = texts() if callable(texts) else texts
        # one scan of all the strings (a 20,000-value enum is 20,000 strings), kept apart by a
        # separator no pattern crosses (digit groups and phone numbers never join across it)
        text = SEPARATOR.join(strings)
        findings: list[Finding] = find_personal_data(text)
        strict = strict_findings(text) if mode == PrivacyMode.STRICT and not findings else ()
    except Exception:  # fail closed: an error in a detector must not let data out
        logger.exception("privacy detection failed; treating the request as private")
        return PrivacyDecision(True, "detector_error")
    stages = tuple(VERSIONS.items())
    if findings:
        return PrivacyDecision(True, "detected", tuple(sorted({f.kind for f in findings})), stages)
    if strict:
        return PrivacyDecision(True, "strict", strict, stages)
    return PrivacyDecision(False, "clean", (), stages)


async def classify_async(
    texts: Texts, mode: PrivacyMode, header: str | None, images: int = 0, size: int | None = None
) -> PrivacyDecision:
    """classify, on a worker thread for long texts (`size`: their characters, or an estimate
    when `texts` computes them): every recognizer is linear, but a 1 MB body still takes tens of
    milliseconds, which the loop's other requests must not wait for (the regex engine holds the
    GIL, which the interpreter hands back to the loop every few ms)."""
    if size is None:
        size = OFF_LOOP_CHARS if callable(texts) else sum(len(text) for text in texts)
    if size < OFF_LOOP_CHARS:
        return classify(texts, mode, header, images)
    try:
        return await asyncio.wait_for(
            off_loop(max(size, INLINE_CHARS), classify, texts, mode, header, images), SCAN_TIMEOUT_S
        )
    except TimeoutError:
        logger.warning("privacy scan exceeded %.0f s; treating the request as private", SCAN_TIMEOUT_S)
        return PrivacyDecision(True, "detector_timeout")


__all__ = [
    "Finding",
    "PrivacyDecision",
    "PrivacyMode",
    "classify",
    "classify_async",
    "find_personal_data",
    "stage_status",
]

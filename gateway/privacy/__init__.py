"""Decide whether a request is private: by key, by header, or because it carries personal data.

Fail closed: if detection itself fails, the request is private; so is one with images in
`auto` mode (the detectors read text: an image's content is not scanned), unless its key's
privacy mode is `public`.
"""

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from gateway.privacy.recognizers import Finding, find_personal_data

logger = logging.getLogger("hybridgw.gateway")
OFF_LOOP_CHARS = 16_384  # longer texts are scanned on a worker thread: the event loop keeps serving


class PrivacyMode(StrEnum):
    ALWAYS_PRIVATE = "always_private"
    AUTO = "auto"
    PUBLIC = "public"


@dataclass(frozen=True, slots=True)
class PrivacyDecision:
    is_private: bool
    reason: str  # "key", "header", "detected", "detector_error", "image", "public", "clean"
    kinds: tuple[str, ...] = field(default_factory=tuple)


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
    try:
        strings = texts() if callable(texts) else texts
        findings: list[Finding] = [finding for text in strings for finding in find_personal_data(text)]
    except Exception:  # fail closed: an error in a detector must not let data out
        logger.exception("privacy detection failed; treating the request as private")
        return PrivacyDecision(True, "detector_error")
    if findings:
        return PrivacyDecision(True, "detected", tuple(sorted({f.kind for f in findings})))
    return PrivacyDecision(False, "clean")


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
    return await asyncio.to_thread(classify, texts, mode, header, images)


__all__ = ["Finding", "PrivacyDecision", "PrivacyMode", "classify", "classify_async", "find_personal_data"]

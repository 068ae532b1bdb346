"""What the small learned privacy classifier reads (issue 61 point 5 (c)): hashed n-grams of a
text, as int64 bucket ids, computed with numpy and a stable hash (never Python's `hash`, which
changes per process), so that training (torch) and inference (onnxruntime) see the same ids.

- characters: 2- to 5-grams of the NFKC, lowercased text;
- shapes: 3-, 5- and 8-grams of the text with every digit written 0, ASCII letters a / A, and
  each other letter as its 128-codepoint block (a script), so "4111 1111" and "7720 3391" share
  their shape ("0000 0000") whatever the digits;
- words: the lowercased words and word pairs (crc32).
"""

import itertools
import re
import unicodedata
import zlib

import numpy as np

BUCKETS = 1 << 16
MAX_CHARS = 4096  # the head of a longer text only (the rules scan all of it)
CHAR_NS, SHAPE_NS = (2, 3, 4, 5), (3, 5, 8)
_PRIME, _MIX = np.uint64(1_000_003), np.uint64(0x9E3779B97F4A7C15)
_WORD = re.compile(r"\w+")


def codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def shapes(points: np.ndarray) -> np.ndarray:
    out = points.copy()
    digit = (points >= 48) & (points <= 57)
    lower = (points >= 97) & (points <= 122)
    upper = (points >= 65) & (points <= 90)
    other = points >= 128
    out[digit], out[lower], out[upper] = 48, 97, 65
    out[other] = np.uint64(0x110000) + (points[other] >> np.uint64(7))
    return out


def ngram_ids(points: np.ndarray, n: int, salt: int) -> np.ndarray:
    if len(points) < n:
        return np.empty(0, dtype=np.int64)
    width = len(points) - n + 1
    h = np.full(width, salt, dtype=np.uint64)
    for k in range(n):
        h = h * _PRIME + points[k : k + width]
    h = (h ^ (h >> np.uint64(29))) * _MIX
    return (h >> np.uint64(40)).astype(np.int64) % BUCKETS


def word_ids(lowered: str) -> np.ndarray:
    words = _WORD.findall(lowered)
    keys = [w.encode() for w in words] + [f"{a} {b}".encode() for a, b in itertools.pairwise(words)]
    return np.fromiter((zlib.crc32(k, 7) % BUCKETS for k in keys), dtype=np.int64, count=len(keys))


def features(text: str) -> np.ndarray:
    """The text's bucket ids (int64, at least one: an empty text is one padding id 0)."""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS])
    lowered = text.lower()
    chars, shape = codepoints(" " + lowered + " "), shapes(codepoints(" " + text + " "))
    parts = [ngram_ids(chars, n, salt=n) for n in CHAR_NS]
    parts += [ngram_ids(shape, n, salt=100 + n) for n in SHAPE_NS]
    parts.append(word_ids(lowered))
    ids = np.concatenate(parts)
    return ids if len(ids) else np.zeros(1, dtype=np.int64)

"""Byte-level BPE of ASCII text, word by word, each word's ids cached.

BPE works on pre-tokens ("words": the pieces the pre-tokenizer regexes cut), and a word's ids never
depend on its neighbours, so the ids of every word seen before are a dictionary lookup. Most prompt
text is ASCII and made of words seen before. On ASCII the pre-tokenizer regexes' Unicode classes
reduce to ASCII ones (\\p{L} is [A-Za-z], \\p{N} is [0-9], \\p{P} the ASCII punctuation), so Python's
own `re` splits exactly as the tokenizer's Oniguruma regexes do; only words not seen yet go to
the BPE model. Text with any non-ASCII character goes to the full tokenizer unchanged.
"""

import re
from collections.abc import Callable

from tokenizers import Tokenizer

MAX_CACHED_WORDS = 1 << 16  # then the cache starts over (words are short; this is a few MB)
MAX_CACHED_WORD_CHARS = 64
MAX_TEXT_CHARS = 1 << 16  # longer text goes to the full tokenizer (Rust, no per-word Python loop)

# Unicode property -> the ASCII characters that have it, as the body of a character class.
_ASCII_CLASSES = {
    "L": "A-Za-z",
    "N": "0-9",
    "P": re.escape("!\"#%&'()*,-./:;?@[\\]_{}"),
}
_PROPERTY = re.compile(r"\\p\{([A-Za-z]+)\}")


def _byte_level_chars() -> dict[int, str]:
    """GPT-2's byte -> printable character table (the ByteLevel pre-tokenizer's)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {byte: chr(byte) for byte in printable}
    shifted = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(256 + shifted)
            shifted += 1
    return table


BYTE_OF_CHAR = {char: bytes([byte]) for byte, char in _byte_level_chars().items()}  # for decoding
_TO_BYTE_LEVEL = str.maketrans({chr(byte): char for byte, char in _byte_level_chars().items() if byte < 128})


def ascii_pattern(pattern: str) -> re.Pattern | None:
    """The pre-tokenizer regex as it behaves on ASCII text, for `re`; None when it uses a Unicode
    property this module does not know (the caller then keeps the full tokenizer)."""
    out, position, in_class = [], 0, False
    for match in _PROPERTY.finditer(pattern):
        name = match.group(1)
        if name not in _ASCII_CLASSES:
            return None
        out.append(pattern[position : match.start()])
        in_class = _inside_class(pattern, match.start(), in_class, position)
        body = _ASCII_CLASSES[name]
        out.append(body if in_class else f"[{body}]")
        position = match.end()
    out.append(pattern[position:])
    try:
        return re.compile("".join(out), re.ASCII)
    except re.error:
        return None


def _inside_class(pattern: str, end: int, in_class: bool, start: int) -> bool:
    """Whether `pattern[end]` sits inside a [...] class, scanning from `start` (state `in_class`)."""
    index = start
    while index < end:
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                index += 1
            if pattern[index + 1 : index + 2] == "]":  # a literal ] first in a class
                index += 1
        elif char == "]" and in_class:
            in_class = False
        index += 1
    return in_class


class AsciiWordEncoder:
    """`encode(text)` == the tokenizer's ids for text without special tokens; ASCII text word by
    word from the cache, anything else through `tokenizer`."""

    def __init__(
        self, patterns: list[re.Pattern], tokenizer: Tokenizer, encode_full: Callable[[str], list[int]]
    ):
        self._patterns = patterns
        # Each pattern as one capturing group: re.split then keeps the matches and the text
        # between them, the loop running in C (a pattern with groups of its own keeps the loop).
        self._splitters = [_as_splitter(p) for p in patterns]
        self._model = tokenizer.model
        self._encode_full = encode_full
        self._words: dict[str, list[int]] = {}

    @staticmethod
    def create(
        regexes: list[str], tokenizer: Tokenizer, encode_full: Callable[[str], list[int]]
    ) -> "AsciiWordEncoder | None":
        patterns = [ascii_pattern(r) for r in regexes]
        if any(p is None for p in patterns):
            return None
        return AsciiWordEncoder(patterns, tokenizer, encode_full)

    def encode(self, text: str) -> list[int]:
        if len(text) > MAX_TEXT_CHARS or not text.isascii():
            return self._encode_full(text)
        ids: list[int] = []
        for word in self._split(text):
            word_ids = self._words.get(word)
            if word_ids is None:
                word_ids = [token.id for token in self._model.tokenize(word.translate(_TO_BYTE_LEVEL))]
                if len(word) <= MAX_CACHED_WORD_CHARS:
                    if len(self._words) >= MAX_CACHED_WORDS:
                        self._words = {}
                    self._words[word] = word_ids
            ids += word_ids
        return ids

    def _split(self, text: str) -> list[str]:
        """Each regex in turn splits every piece, keeping the matches and the text between them
        (the tokenizers' Split with behavior="isolated")."""
        pieces = [text]
        for pattern, splitter in zip(self._patterns, self._splitters, strict=True):
            if splitter is not None:  # the same pieces: empty matches split, and empty pieces go
                pieces = [part for piece in pieces for part in splitter.split(piece) if part]
                continue
            split = []
            for piece in pieces:
                start = 0
                for match in pattern.finditer(piece):
                    if match.start() > start:
                        split.append(piece[start : match.start()])
                    if match.end() > match.start():
                        split.append(match.group())
                    start = match.end()
                if start < len(piece):
                    split.append(piece[start:])
            pieces = split
        return pieces


def _as_splitter(pattern: re.Pattern) -> re.Pattern | None:
    """`pattern` wrapped in one capturing group, or None when it has groups of its own (re.split
    would return those too)."""
    if pattern.groups:
        return None
    return re.compile(f"({pattern.pattern})", pattern.flags)

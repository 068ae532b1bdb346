"""ASCII text tokenized word by word from a cache gives exactly the tokenizer's own ids, for every
byte-level pre-tokenizer, and the ASCII forms of the pre-tokenizer regexes are the right ones.

The encoder takes the text between special tokens (the segment cache splits those out first), so
its reference is the tokenizer on plain text: special-token text such as `<|im_end|>` is words."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.tokenizer import ascii_words
from formats.tokenizer.ascii_words import AsciiWordEncoder, ascii_pattern
from formats.tokenizer.pretokenizers import PRE_TOKENIZER_REGEXES
from tests.formats.test_segment_cache import TOKENIZERS


def _plain(tokenizer, text: str) -> list[int]:
    """The tokenizer's own ids for `text` as plain text (no special tokens parsed)."""
    tokenizer._tokenizer.encode_special_tokens = True
    return tokenizer._tokenizer.encode(text, add_special_tokens=False).ids


def _encoder(tokenizer) -> AsciiWordEncoder:
    return AsciiWordEncoder.create(
        PRE_TOKENIZER_REGEXES[tokenizer.vocab.pre],
        tokenizer._tokenizer,
        lambda text: _plain(tokenizer, text),
    )


ENCODERS = [_encoder(t) for t in TOKENIZERS]
ASCII_TEXT = st.lists(
    st.one_of(
        st.text(st.characters(max_codepoint=127), max_size=10),
        st.sampled_from(["'s", "'LL", " 12345", "  \n\n ", "\r\n", "don't", " foo_bar()", "x = 1;\t"]),
    ),
    max_size=8,
).map("".join)


def test_every_pre_tokenizer_has_an_ascii_form():
    assert all(ascii_pattern(r) is not None for regexes in PRE_TOKENIZER_REGEXES.values() for r in regexes)
    assert all(encoder is not None for encoder in ENCODERS)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\p{L}+", "[A-Za-z]+"),
        (r"[^\r\n\p{L}\p{N}]?\p{L}+", r"[^\r\nA-Za-z0-9]?[A-Za-z]+"),
        (r"[\]\p{N}]|\p{N}{1,3}", r"[\]0-9]|[0-9]{1,3}"),
        (r"\s?\p{P}+", "\\s?[" + re.escape("!\"#%&'()*,-./:;?@[\\]_{}") + "]+"),
    ],
)
def test_unicode_classes_become_their_ascii_members(pattern, expected):
    assert ascii_pattern(pattern).pattern == expected


def test_an_unknown_property_keeps_the_full_tokenizer():
    assert ascii_pattern(r"\p{Lu}+") is None
    assert AsciiWordEncoder.create([r"\p{Lu}+"], TOKENIZERS[0]._tokenizer, lambda text: []) is None


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, len(TOKENIZERS) - 1), text=ASCII_TEXT)
def test_ascii_text_gives_the_tokenizers_own_ids(which, text):
    pre_tokenizer = TOKENIZERS[which]._tokenizer.pre_tokenizer
    words = [word.translate(ascii_words._TO_BYTE_LEVEL) for word in ENCODERS[which]._split(text)]
    assert words == [piece for piece, _ in pre_tokenizer.pre_tokenize_str(text)]  # the same words
    expected = _plain(TOKENIZERS[which], text)
    assert ENCODERS[which].encode(text) == expected
    assert ENCODERS[which].encode(text) == expected  # from the cache


def test_text_with_non_ascii_goes_to_the_full_tokenizer():
    calls = []
    encoder = AsciiWordEncoder.create(
        [r"\p{L}+"], TOKENIZERS[0]._tokenizer, lambda text: calls.append(text) or [7]
    )
    assert encoder.encode("café") == [7] and calls == ["café"]


def test_the_word_cache_starts_over_when_full(monkeypatch):
    monkeypatch.setattr(ascii_words, "MAX_CACHED_WORDS", 3)
    encoder, tokenizer = ENCODERS[0], TOKENIZERS[0]
    encoder._words = {}
    text = "one two three four five"
    assert encoder.encode(text) == _plain(tokenizer, text)
    assert 0 < len(encoder._words) <= 3


def test_long_text_goes_to_the_full_tokenizer(monkeypatch):
    monkeypatch.setattr(ascii_words, "MAX_TEXT_CHARS", 8)
    calls = []
    encoder = AsciiWordEncoder.create(
        [r"\p{L}+"], TOKENIZERS[0]._tokenizer, lambda text: calls.append(text) or [1]
    )
    assert encoder.encode("nine char") == [1] and calls == ["nine char"]


@pytest.mark.parametrize("pattern", [r"[0-9]", r"x*", r"\s+(?!\S)|\s+", r"(?i:'s|'t)| ?[A-Za-z]+"])
@pytest.mark.parametrize("text", ["", "xab1ab22y", "a  1  b\n\nx", "it's   THE'T x"])
def test_splitting_in_c_gives_the_pieces_of_the_match_loop(pattern, text):
    fast = AsciiWordEncoder([re.compile(pattern, re.ASCII)], TOKENIZERS[0]._tokenizer, lambda text: [])
    loop = AsciiWordEncoder([re.compile(pattern, re.ASCII)], TOKENIZERS[0]._tokenizer, lambda text: [])
    loop._splitters = [None]
    assert fast._splitters[0] is not None
    assert fast._split(text) == loop._split(text)
    assert "".join(fast._split(text)) == text


def test_a_pattern_with_groups_of_its_own_keeps_the_match_loop():
    grouped = AsciiWordEncoder([re.compile(r"(a)b|[0-9]")], TOKENIZERS[0]._tokenizer, lambda text: [])
    plain = AsciiWordEncoder([re.compile(r"(?:a)b|[0-9]")], TOKENIZERS[0]._tokenizer, lambda text: [])
    assert grouped._splitters == [None] and plain._splitters[0] is not None
    assert grouped._split("xab1ab22y") == plain._split("xab1ab22y") == ["x", "ab", "1", "ab", "2", "2", "y"]

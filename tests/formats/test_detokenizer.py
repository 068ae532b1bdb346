"""Streaming detokenization: pieces concatenate to the full decode, no broken characters."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.tokenizer import GGUFTokenizer, IncrementalDetokenizer
from formats.tokenizer.byte_detokenizer import ByteLevelDetokenizer
from tests.formats.test_tokenizer import TINY_REFERENCE, _metadata
from tests.formats.tokenizer_corpus import CORPUS


def _stream(tokenizer, ids, **kwargs) -> list[str]:
    detokenizer = IncrementalDetokenizer(tokenizer, **kwargs)
    pieces = [detokenizer.push(token_id) for token_id in ids]
    return [*pieces, detokenizer.flush()]


def _tokenizers() -> list[GGUFTokenizer]:
    byte_level, sentencepiece = TINY_REFERENCE["vocabularies"][0], TINY_REFERENCE["vocabularies"][-1]
    return [
        GGUFTokenizer.from_metadata(_metadata(byte_level["vocab"], byte_level["pre"])),
        GGUFTokenizer.from_metadata(_metadata(sentencepiece["vocab"], None)),
    ]


@pytest.mark.parametrize("tokenizer", _tokenizers(), ids=["byte-level", "sentencepiece"])
def test_stream_equals_full_decode_and_never_splits_a_character(tokenizer):
    for text in CORPUS:
        ids = tokenizer.encode(text, add_special=False, parse_special=True)
        pieces = _stream(tokenizer, ids)
        assert "".join(pieces) == tokenizer.decode(ids)
        # SentencePiece puts a space prefix after a special token (as llama.cpp does), so only text
        # without special tokens comes back verbatim there.
        if tokenizer.vocab.model == "gpt2" or "<|" not in text:
            assert "".join(pieces) == text
        assert not any("\ufffd" in piece for piece in pieces)


@pytest.mark.demo_model
def test_demo_model_emoji_arrive_whole(demo_model_path):
    tokenizer = GGUFTokenizer.from_file(demo_model_path)
    text = "Emoji: 🎉🚀 and 日本語"
    ids = tokenizer.encode(text, add_special=False)
    pieces = _stream(tokenizer, ids)
    assert "".join(pieces) == text
    assert "🎉" in pieces or any(p.endswith("🎉") for p in pieces)
    assert all("\ufffd" not in p for p in pieces)
    assert sum(1 for p in pieces if p == "") > 0  # held back while a character was incomplete


def test_stray_bytes_are_released_once_followed_or_flushed():
    tokenizer = _tokenizers()[0]
    stray = [t for t in range(tokenizer.vocab_size) if tokenizer.piece(t) == "\ufffd"][:3]
    hello = tokenizer.encode("Hello", add_special=False)
    pieces = _stream(tokenizer, [*stray, *hello, *stray])
    assert "".join(pieces) == tokenizer.decode([*stray, *hello, *stray])
    assert pieces[-1].startswith("\ufffd")  # the trailing stray bytes only come out at flush
    assert "Hello" in "".join(pieces[:-1])


def test_context_ids_are_not_emitted():
    tokenizer = _tokenizers()[0]
    prompt = tokenizer.encode("Hello world", add_special=False)
    completion = tokenizer.encode(" def add", add_special=False)
    detokenizer = IncrementalDetokenizer(tokenizer, context_ids=prompt)
    text = "".join(detokenizer.push(t) for t in completion) + detokenizer.flush()
    assert text == " def add"


BYTE_LEVEL = _tokenizers()[0]


def _byte_table_stream(tokenizer, ids, skip_special=False) -> list[str]:
    detokenizer = tokenizer.detokenizer(skip_special=skip_special)
    assert isinstance(detokenizer, ByteLevelDetokenizer)
    return [*(detokenizer.push(token_id) for token_id in ids), detokenizer.flush()]


def test_byte_level_vocabularies_stream_from_the_byte_table():
    assert isinstance(_tokenizers()[1].detokenizer(), IncrementalDetokenizer)  # SentencePiece: window
    for text in CORPUS:
        ids = BYTE_LEVEL.encode(text, add_special=False, parse_special=True)
        pieces = _byte_table_stream(BYTE_LEVEL, ids)
        assert "".join(pieces) == text
        assert not any("\ufffd" in piece for piece in pieces)


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.integers(0, BYTE_LEVEL.vocab_size - 1), max_size=24), skip=st.booleans())
def test_any_id_sequence_streams_to_the_full_decode(ids, skip):
    """Random ids: bytes that never form a character, specials, added tokens; as the tokenizer
    decodes them, U+FFFD for U+FFFD."""
    expected = BYTE_LEVEL.decode(ids, skip_special=skip)
    assert "".join(_byte_table_stream(BYTE_LEVEL, ids, skip)) == expected


@pytest.mark.demo_model
def test_every_demo_token_stands_for_the_bytes_the_tokenizer_decodes(demo_model_path):
    tokenizer = GGUFTokenizer.from_file(demo_model_path)
    for token_id in range(tokenizer.vocab_size):
        piece = tokenizer.decode([token_id])
        assert tokenizer.token_bytes(token_id).decode("utf-8", "replace") == piece, token_id
    text = "Emoji: 🎉🚀 and 日本語, café"
    ids = tokenizer.encode(text, add_special=False)
    assert "".join(_byte_table_stream(tokenizer, ids)) == text


def test_byte_table_context_ids_are_not_emitted():
    prompt = BYTE_LEVEL.encode("Hello world", add_special=False)
    completion = BYTE_LEVEL.encode(" def add", add_special=False)
    detokenizer = BYTE_LEVEL.detokenizer(context_ids=prompt)
    assert "".join(detokenizer.push(t) for t in completion) + detokenizer.flush() == " def add"


def test_ids_outside_the_vocabulary_stand_for_nothing_as_in_decode():
    ids = [*BYTE_LEVEL.encode("ok", add_special=False), BYTE_LEVEL.vocab_size, 10**9, -1]
    assert "".join(_byte_table_stream(BYTE_LEVEL, ids)) == "ok"

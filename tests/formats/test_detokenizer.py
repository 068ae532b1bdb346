"""Streaming detokenization: pieces concatenate to the full decode, no broken characters."""

import pytest

from formats.tokenizer import GGUFTokenizer, IncrementalDetokenizer
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

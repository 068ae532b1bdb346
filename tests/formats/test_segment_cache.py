"""Prompts tokenized fragment by fragment with the fragments cached give exactly the tokenizer's
own ids, tokenize each repeated fragment once, and stay within their memory bound."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.tokenizer import GGUFTokenizer
from formats.tokenizer import gguf_tokenizer as gguf_tokenizer_module
from formats.tokenizer import segment_cache as segment_cache_module
from formats.tokenizer.builders import split_out_tokens
from formats.tokenizer.segment_cache import SegmentCache
from tests.formats.test_tokenizer import TINY_REFERENCE, _metadata
from tests.formats.tokenizer_corpus import CORPUS

BYTE_LEVEL = [v for v in TINY_REFERENCE["vocabularies"] if v["vocab"]["model"] == "gpt2"]


def _tokenizers() -> list[GGUFTokenizer]:
    return [GGUFTokenizer.from_metadata(_metadata(v["vocab"], v["pre"])) for v in BYTE_LEVEL]


def _uncached(tokenizer: GGUFTokenizer, text: str) -> list[int]:
    tokenizer._tokenizer.encode_special_tokens = False
    return tokenizer._tokenizer.encode(text, add_special_tokens=False).ids


TOKENIZERS = _tokenizers()


def test_every_byte_level_vocabulary_uses_the_cache():
    assert len(TOKENIZERS) >= 5
    assert all(t._segments is not None for t in TOKENIZERS)


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(0, len(TOKENIZERS) - 1),
    parts=st.lists(
        st.one_of(st.sampled_from(CORPUS), st.text(max_size=12), st.integers(0, 10**6)), max_size=8
    ),
)
def test_cached_encoding_equals_the_tokenizers_own(which, parts):
    tokenizer = TOKENIZERS[which]
    specials = split_out_tokens(tokenizer.vocab)
    # Integers stand for special tokens, glued to the text around them.
    text = "".join(specials[p % len(specials)] if isinstance(p, int) else p for p in parts)
    for _ in range(2):  # the second time from the cache
        assert tokenizer.encode(text, add_special=False, parse_special=True) == _uncached(tokenizer, text)


@pytest.mark.demo_model
def test_demo_chat_prompts_equal_the_tokenizers_own(demo_model_path):
    tokenizer = GGUFTokenizer.from_file(demo_model_path)
    turns = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"
    for text in CORPUS:
        prompt = turns.format(text)
        assert tokenizer.encode(prompt, add_special=False, parse_special=True) == _uncached(tokenizer, prompt)


def test_each_repeated_fragment_is_tokenized_once():
    calls = []

    def encode_fragment(text: str) -> list[int]:
        calls.append(text)
        return [ord(c) for c in text]

    cache = SegmentCache({"<s>": 1, "<s><t>": 2, "<t>": 3}, encode_fragment)
    assert cache.encode("ab<s><t>cd<s>ab") == [97, 98, 2, 99, 100, 1, 97, 98]  # longest special first
    assert cache.encode("<t>cd<s>ef") == [3, 99, 100, 1, 101, 102]
    assert calls == ["ab", "cd", "ef"]
    first = cache.encode("ab")
    first.append(0)  # callers own what they get
    assert cache.encode("ab") == [97, 98]


def test_the_cache_stays_within_its_bound(monkeypatch):
    monkeypatch.setattr(segment_cache_module, "MAX_CACHED_CHARS", 10)
    monkeypatch.setattr(segment_cache_module, "MAX_FRAGMENT_CHARS", 6)
    calls = []
    cache = SegmentCache({"|": 0}, lambda text: calls.append(text) or [len(text)])
    cache.encode("aaaa|bbbb|cccc")  # 12 characters: the least recently used goes
    assert cache.cached_chars == 8
    cache.encode("bbbb|eeee")  # bbbb used again, so cccc is the one to go
    cache.encode("bbbb|cccc")
    assert calls == ["aaaa", "bbbb", "cccc", "eeee", "cccc"]
    cache.encode("ddddddd")  # longer than a cached fragment may be
    cache.encode("ddddddd")
    assert calls[-2:] == ["ddddddd", "ddddddd"] and cache.cached_chars <= 10


def test_a_vocabulary_with_too_many_special_tokens_keeps_the_plain_tokenizer(monkeypatch):
    vocab = BYTE_LEVEL[0]
    monkeypatch.setattr(gguf_tokenizer_module, "MAX_SPECIALS", len(split_out_tokens(TOKENIZERS[0].vocab)) - 1)
    tokenizer = GGUFTokenizer.from_metadata(_metadata(vocab["vocab"], vocab["pre"]))
    assert tokenizer._segments is None
    text = "<|im_start|>user\nhi<|im_end|>"
    assert tokenizer.encode(text, add_special=False, parse_special=True) == _uncached(tokenizer, text)

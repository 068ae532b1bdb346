"""Tokenizer from GGUF metadata: token ids identical to llama.cpp's, recorded with llama-cpp-python.

The references were produced by `benchmarks/reference/record_llamacpp_tokens.py` (demo model) and
`record_llamacpp_tiny_vocabs.py` (one trained vocabulary per pre-tokenizer, and a SentencePiece
BPE vocabulary with byte fallback); the version of llama-cpp-python is stored with them.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from formats.errors import TokenizerError
from formats.tokenizer import GGUFTokenizer, TokenType
from tests.formats.tokenizer_corpus import CORPUS

HERE = Path(__file__).parent
DEMO_REFERENCE = json.loads((HERE / "llamacpp_token_ids.json").read_text())
TINY_REFERENCE = json.loads((HERE / "llamacpp_tiny_vocab_ids.json").read_text())


def test_references_were_recorded_with_llama_cpp():
    assert DEMO_REFERENCE["llama_cpp_python"] == TINY_REFERENCE["llama_cpp_python"] == "0.3.36"
    assert {case["text"] for case in DEMO_REFERENCE["cases"]} == set(CORPUS)


@pytest.fixture(scope="module")
def demo_tokenizer(demo_model_path) -> GGUFTokenizer:
    return GGUFTokenizer.from_file(demo_model_path)


@pytest.mark.demo_model
@pytest.mark.parametrize(
    "case", DEMO_REFERENCE["cases"], ids=lambda c: f"{c['text'][:24]!r}-{c['parse_special']}"
)
def test_demo_model_ids_match_llama_cpp(demo_tokenizer, case):
    ids = demo_tokenizer.encode(case["text"], add_special=False, parse_special=case["parse_special"])
    assert ids == case["ids"]


@pytest.mark.demo_model
def test_demo_model_round_trips_text(demo_tokenizer):
    for text in CORPUS:
        assert demo_tokenizer.decode(demo_tokenizer.encode(text, parse_special=True)) == text


def _metadata(vocab: dict, pre: str | None) -> dict:
    metadata = {
        "tokenizer.ggml.model": vocab["model"],
        "tokenizer.ggml.tokens": vocab["tokens"],
        "tokenizer.ggml.token_type": np.array(vocab["token_type"], dtype=np.int32),
    }
    if pre is not None:
        metadata["tokenizer.ggml.pre"] = pre
    if "merges" in vocab:
        metadata["tokenizer.ggml.merges"] = vocab["merges"]
    if "scores" in vocab:
        metadata["tokenizer.ggml.scores"] = np.array(vocab["scores"], dtype=np.float32)
    for name in ("bos", "eos", "unknown"):
        if f"{name}_token_id" in vocab:
            metadata[f"tokenizer.ggml.{name}_token_id"] = vocab[f"{name}_token_id"]
    return metadata


@pytest.mark.parametrize(
    "reference", TINY_REFERENCE["vocabularies"], ids=lambda v: v["pre"] or "sentencepiece"
)
def test_each_pre_tokenizer_matches_llama_cpp(reference):
    tokenizer = GGUFTokenizer.from_metadata(_metadata(reference["vocab"], reference["pre"]))
    for case in reference["cases"]:
        ids = tokenizer.encode(case["text"], add_special=False, parse_special=case["parse_special"])
        assert ids == case["ids"], case["text"]


def test_sentencepiece_vocabulary_matches_sentencepiece_and_adds_bos():
    reference = TINY_REFERENCE["vocabularies"][-1]
    assert reference["vocab"]["model"] == "llama"
    tokenizer = GGUFTokenizer.from_metadata(_metadata(reference["vocab"], None))
    assert tokenizer.vocab.add_bos and tokenizer.vocab.add_space_prefix
    byte_fallbacks = 0
    for case in reference["cases"]:
        if case["parse_special"]:
            continue
        if "<|im_end|>" in case["text"]:
            continue  # llama.cpp (and so we) make it a control token; sentencepiece keeps it user-defined
        ids = tokenizer.encode(case["text"])
        assert ids == [reference["vocab"]["bos_token_id"], *case["sentencepiece_ids"]]
        byte_fallbacks += sum(tokenizer.vocab.token_types[i] == TokenType.BYTE for i in ids)
        assert tokenizer.decode(ids, skip_special=True) == case["text"]
    assert byte_fallbacks > 0  # characters outside the vocabulary really went through <0xXX>


def test_add_eos_and_stop_ids():
    vocab = TINY_REFERENCE["vocabularies"][0]["vocab"]
    metadata = _metadata(vocab, "gpt-2") | {
        "tokenizer.ggml.add_eos_token": True,
        "tokenizer.ggml.add_bos_token": True,
    }
    tokenizer = GGUFTokenizer.from_metadata(metadata)
    ids = tokenizer.encode("Hello")
    assert ids[0] == vocab["bos_token_id"] and ids[-1] == vocab["eos_token_id"]
    assert tokenizer.encode("Hello", add_special=False) == ids[1:-1]
    assert tokenizer.stop_token_ids == {vocab["eos_token_id"], vocab["tokens"].index("<|endoftext|>")}


def test_end_of_generation_tokens_become_control_tokens_as_in_llama_cpp():
    vocab = TINY_REFERENCE["vocabularies"][-1]["vocab"]
    im_end = vocab["tokens"].index("<|im_end|>")
    assert vocab["token_type"][im_end] == TokenType.USER_DEFINED
    tokenizer = GGUFTokenizer.from_metadata(_metadata(vocab, None))
    assert tokenizer.vocab.token_types[im_end] == TokenType.CONTROL
    assert im_end in tokenizer.stop_token_ids
    assert im_end not in tokenizer.encode("a<|im_end|>", parse_special=False)
    assert im_end in tokenizer.encode("a<|im_end|>", parse_special=True)


BAD_METADATA = {
    "no tokenizer": ({}, "missing"),
    "unknown model": (
        {"tokenizer.ggml.model": "rwkv", "tokenizer.ggml.tokens": ["a"]},
        "unsupported tokenizer",
    ),
    "no tokens": ({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": []}, "non-empty"),
    "bpe without merges": ({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": ["a"]}, "merges"),
    "spm without scores": ({"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["a"]}, "scores"),
    "bad token type": (
        {
            "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.tokens": ["a", "b", "ab"],
            "tokenizer.ggml.merges": ["a b"],
            "tokenizer.ggml.token_type": np.array([1, 9, 1], dtype=np.int32),
        },
        "outside",
    ),
    "merge of unknown tokens": (
        {
            "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.tokens": ["a", "b"],
            "tokenizer.ggml.merges": ["a c"],
        },
        "missing from the vocabulary",
    ),
    "unknown pre-tokenizer": (
        {
            "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.tokens": ["a", "b", "ab"],
            "tokenizer.ggml.merges": ["a b"],
            "tokenizer.ggml.pre": "klingon",
        },
        "unknown BPE pre-tokenizer",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_METADATA))
def test_bad_vocabularies_are_typed_errors(name):
    metadata, message = BAD_METADATA[name]
    with pytest.raises(TokenizerError, match=message):
        GGUFTokenizer.from_metadata(metadata)

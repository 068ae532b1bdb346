"""The tokenizer the rest of hybridgw uses: encode, decode, special ids, one object per model."""

import re
from pathlib import Path
from typing import Any

import numpy as np

from formats.gguf_reader import GGUFReader
from formats.tokenizer.ascii_words import BYTE_OF_CHAR, AsciiWordEncoder
from formats.tokenizer.builders import build_tokenizer, split_out_tokens
from formats.tokenizer.byte_detokenizer import ByteLevelDetokenizer
from formats.tokenizer.detokenizer import IncrementalDetokenizer
from formats.tokenizer.pretokenizers import PRE_TOKENIZER_REGEXES
from formats.tokenizer.segment_cache import MAX_SPECIALS, SegmentCache
from formats.tokenizer.token_types import TokenType
from formats.tokenizer.vocab import Vocab

LONG_TEXT_CHARS = 16_384


class GGUFTokenizer:
    """Wraps a `tokenizers.Tokenizer` built from `tokenizer.ggml.*` metadata.

    `encode(text, add_special=True)` adds BOS/EOS when the vocabulary asks for them, as
    `llama_tokenize` does; `parse_special` decides whether control-token text such as
    `<|im_start|>` in the input becomes that token (rendered templates) or plain text (user input).
    """

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self._tokenizer = build_tokenizer(vocab)
        special_types = [TokenType.CONTROL, TokenType.UNKNOWN, TokenType.UNUSED]
        self._special_ids = frozenset(np.flatnonzero(np.isin(vocab.token_types, special_types)).tolist())
        # Text split out as one token each (special tokens parsed), and their ids.
        split_out = {token: self._tokenizer.token_to_id(token) for token in split_out_tokens(vocab)}
        self._added_ids = frozenset(split_out.values())
        self._split_out = split_out
        self._split_pattern = _alternation(split_out)  # where special parsing splits a prompt
        control = [t for t, i in split_out.items() if vocab.token_types[i] == TokenType.CONTROL]
        self._control_pattern = _alternation(control)
        self._token_bytes: dict[int, bytes] = {}
        self._segments = None
        if vocab.model == "gpt2" and len(split_out) <= MAX_SPECIALS:
            self._segments = self._segment_cache(split_out)

    def _segment_cache(self, specials: dict[str, int]) -> SegmentCache:
        """Prompts with special tokens parsed, fragment by fragment, the fragments' ids cached."""

        def encode_fragment(text: str) -> list[int]:
            if len(text) < LONG_TEXT_CHARS:
                return self._tokenizer.encode(text, add_special_tokens=False).ids
            return self._tokenizer.encode_batch([text], add_special_tokens=False)[0].ids  # GIL released

        regexes = PRE_TOKENIZER_REGEXES[self.vocab.pre]
        words = AsciiWordEncoder.create(regexes, self._tokenizer, encode_fragment)
        return SegmentCache(specials, words.encode if words is not None else encode_fragment)

    @staticmethod
    def from_metadata(metadata: dict[str, Any]) -> "GGUFTokenizer":
        return GGUFTokenizer(Vocab.from_metadata(metadata))

    @staticmethod
    def from_file(path: str | Path) -> "GGUFTokenizer":
        return GGUFTokenizer.from_metadata(GGUFReader(path).metadata)

    @property
    def vocab_size(self) -> int:
        return self.vocab.size

    @property
    def bos_token_id(self) -> int | None:
        return self.vocab.bos_token_id

    @property
    def eos_token_id(self) -> int | None:
        return self.vocab.eos_token_id

    @property
    def stop_token_ids(self) -> frozenset[int]:
        """Ids that end generation: EOS, EOT and the end-of-generation tokens llama.cpp knows."""
        return self.vocab.end_of_generation_ids

    def encode(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]:
        if parse_special and self._segments is not None:
            ids = self._segments.encode(text)
        else:
            self._tokenizer.encode_special_tokens = not parse_special
            if len(text) < LONG_TEXT_CHARS:
                ids = self._tokenizer.encode(text, add_special_tokens=False).ids
            else:  # encode_batch releases the GIL: a thread encoding a long prompt lets others run
                ids = self._tokenizer.encode_batch([text], add_special_tokens=False)[0].ids
        return self._with_bos_eos(ids, add_special)

    def _with_bos_eos(self, ids: list[int], add_special: bool) -> list[int]:
        if add_special and self.vocab.add_bos and self.vocab.bos_token_id is not None:
            ids.insert(0, self.vocab.bos_token_id)
        if add_special and self.vocab.add_eos and self.vocab.eos_token_id is not None:
            ids.append(self.vocab.eos_token_id)
        return ids

    def contains_control_text(self, text: str) -> bool:
        """Whether `text` holds the text of a control token (`<|im_start|>`, `</s>`, ...)."""
        return self._control_pattern is not None and self._control_pattern.search(text) is not None

    def encode_with_literals(
        self, text: str, literal_spans: list[tuple[int, int]], add_special: bool = True
    ) -> list[int]:
        """`encode(text, parse_special=True)`, except that special-token text overlapping a
        `(start, end)` span (user content inside a rendered template) stays plain text: only the
        template itself can produce control tokens. Outside such text, the ids are those of
        `encode` (the same split points, the same fragments)."""
        ids: list[int] = []
        start = 0
        if self._split_pattern is not None:
            for match in self._split_pattern.finditer(text):
                if any(match.start() < end and match.end() > begin for begin, end in literal_spans):
                    continue
                ids += self._encode_plain(text[start : match.start()])
                ids.append(self._split_out[match.group()])
                start = match.end()
        ids += self._encode_plain(text[start:])
        return self._with_bos_eos(ids, add_special)

    def _encode_plain(self, text: str) -> list[int]:
        if not text:
            return []
        self._tokenizer.encode_special_tokens = True
        return self._tokenizer.encode(text, add_special_tokens=False).ids

    def decode(self, token_ids: list[int], skip_special: bool = False) -> str:
        if skip_special:
            token_ids = [t for t in token_ids if t not in self._special_ids]
        return self._tokenizer.decode(token_ids, skip_special_tokens=False)

    def detokenizer(self, skip_special: bool = False, context_ids: list[int] | None = None):
        """A streaming detokenizer: from the byte table for byte-level BPE, else by re-decoding
        a short window (SentencePiece's space handling depends on what precedes a token)."""
        if self.vocab.model == "gpt2":
            skipped = self._special_ids if skip_special else frozenset()
            return ByteLevelDetokenizer(self.token_bytes, skipped, context_ids)
        return IncrementalDetokenizer(self, skip_special, context_ids)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a byte-level BPE token stands for (an added token: its text as UTF-8); none
        for an id outside the vocabulary, as decode skips it."""
        cached = self._token_bytes.get(token_id)
        if cached is None:
            if not 0 <= token_id < self.vocab.size:
                return b""
            text = self.vocab.tokens[token_id]
            if token_id in self._added_ids:
                cached = text.encode()
            else:
                cached = b"".join(BYTE_OF_CHAR.get(char) or char.encode() for char in text)
            self._token_bytes[token_id] = cached
        return cached

    def to_hf_json(self) -> str:
        """The equivalent Hugging Face tokenizer.json, for checkpoints exported from a GGUF file."""
        return self._tokenizer.to_str()

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_ids

    def token_text(self, token_id: int) -> str:
        """The vocabulary entry as stored (byte-level or '▁' form), for display."""
        return self.vocab.tokens[token_id]

    def piece(self, token_id: int) -> str:
        """The text one token stands for on its own (may hold U+FFFD for a partial character)."""
        return self._tokenizer.decode([token_id], skip_special_tokens=False)


def _alternation(texts) -> re.Pattern | None:
    """Longest first: where two texts start at the same place the longer wins, as in the
    tokenizers' leftmost-longest matching."""
    texts = sorted(texts, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, texts))) if texts else None

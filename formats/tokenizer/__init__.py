"""Tokenizer built from GGUF metadata, on the `tokenizers` library, matching llama.cpp's ids."""

from formats.tokenizer.detokenizer import IncrementalDetokenizer
from formats.tokenizer.gguf_tokenizer import GGUFTokenizer
from formats.tokenizer.token_types import TokenType
from formats.tokenizer.vocab import Vocab

__all__ = ["GGUFTokenizer", "IncrementalDetokenizer", "TokenType", "Vocab"]

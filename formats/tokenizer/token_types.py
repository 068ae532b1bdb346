"""Token types of `tokenizer.ggml.token_type` (the same numbering as SentencePiece)."""

from enum import IntEnum


class TokenType(IntEnum):
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6

"""Streaming detokenization for byte-level BPE from a per-token byte table, as llama.cpp's
token_to_piece does it: each token stands for fixed bytes, found once per vocabulary entry; an
incremental UTF-8 decoder releases every complete character and holds the first bytes of one
until the rest arrive (a token may end inside a character). Nothing is decoded twice, so a token
costs a lookup, not a re-decode of a window of recent tokens.
"""

import codecs
from collections.abc import Callable

_UTF8_DECODER = codecs.getincrementaldecoder("utf-8")


class ByteLevelDetokenizer:
    """The IncrementalDetokenizer interface: `push` each token id, `flush` at the end; what they
    return concatenates to the tokenizer's decode of all the ids."""

    def __init__(
        self,
        token_bytes: Callable[[int], bytes],
        skipped_ids: frozenset[int] = frozenset(),
        context_ids: list[int] | None = None,
    ):
        self._token_bytes = token_bytes
        self._skipped = skipped_ids
        self._utf8 = _UTF8_DECODER("replace")
        for token_id in context_ids or ():
            self.push(token_id)  # decoded, not emitted: only a character it leaves open carries over

    def push(self, token_id: int) -> str:
        if token_id in self._skipped:
            return ""
        return self._utf8.decode(self._token_bytes(token_id))

    def flush(self) -> str:
        """What is still held at the end of a stream, broken characters as U+FFFD."""
        return self._utf8.decode(b"", final=True)

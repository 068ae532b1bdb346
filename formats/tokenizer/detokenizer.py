"""Streaming detokenization that never emits a broken UTF-8 character.

A token may end in the middle of a multi-byte character (byte-level BPE, byte fallback). Like
vLLM, we decode a short window of recent tokens and only release text once it no longer ends in
the replacement character; the window start moves forward so each step costs O(window), not
O(sequence).
"""

from typing import Protocol

REPLACEMENT = "\ufffd"
MAX_PENDING_TOKENS = 4  # a UTF-8 character spans at most four byte tokens


class Decoder(Protocol):
    def decode(self, token_ids: list[int], skip_special: bool = False) -> str: ...


class IncrementalDetokenizer:
    """Feed token ids one at a time with `push`; concatenated results equal `decode(all)`."""

    def __init__(self, tokenizer: Decoder, skip_special: bool = False, context_ids: list[int] | None = None):
        self.tokenizer = tokenizer
        self.skip_special = skip_special
        self.token_ids: list[int] = list(context_ids or [])
        # Text of token_ids[prefix_offset:read_offset] has already been emitted (or is context).
        self.prefix_offset = max(0, len(self.token_ids) - 5)
        self.read_offset = len(self.token_ids)

    def push(self, token_id: int) -> str:
        self.token_ids.append(token_id)
        return self._release(force=False)

    def flush(self) -> str:
        """Release whatever is pending at the end of a stream, broken characters included."""
        return self._release(force=True) if self.read_offset < len(self.token_ids) else ""

    def _release(self, force: bool) -> str:
        decode = self.tokenizer.decode
        prefix_text = decode(self.token_ids[self.prefix_offset : self.read_offset], self.skip_special)
        full_text = decode(self.token_ids[self.prefix_offset :], self.skip_special)
        pending = len(self.token_ids) - self.read_offset
        if full_text.endswith(REPLACEMENT) and not force and pending < MAX_PENDING_TOKENS:
            return ""
        new_text = full_text[len(prefix_text) :]
        self.prefix_offset = self.read_offset
        self.read_offset = len(self.token_ids)
        return new_text

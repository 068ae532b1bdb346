"""Streaming detokenization that never emits a broken UTF-8 character.

A token may end in the middle of a multi-byte character (byte-level BPE merges can even span two
characters; SentencePiece falls back to single bytes). We decode a short window of recent tokens
and release its text only up to the last complete character: trailing U+FFFD is held back until
more tokens complete it, or until `flush()` at the end of the stream. The window slides forward
whenever everything decoded so far has been released, so each step costs O(window).
"""

from typing import Protocol

REPLACEMENT = "\ufffd"
WINDOW_TOKENS = 6  # slide once the window holds more tokens than this...
KEEP_TOKENS = 3  # ...keeping this many, so the window decodes as it does in context


class Decoder(Protocol):
    def decode(self, token_ids: list[int], skip_special: bool = False) -> str: ...


class IncrementalDetokenizer:
    """Feed token ids one at a time with `push`; the concatenation of everything returned (and of
    `flush()`) equals `decode(all ids)`. `context_ids` (e.g. the prompt) are decoded, not emitted."""

    def __init__(self, tokenizer: Decoder, skip_special: bool = False, context_ids: list[int] | None = None):
        self.tokenizer = tokenizer
        self.skip_special = skip_special
        self.token_ids: list[int] = list(context_ids or [])
        self.window_start = max(0, len(self.token_ids) - KEEP_TOKENS)
        # Characters of decode(token_ids[window_start:]) already emitted (or part of the context).
        self.num_emitted_chars = len(self._window_text())

    def push(self, token_id: int) -> str:
        self.token_ids.append(token_id)
        return self._release(force=False)

    def flush(self) -> str:
        """Release what is still held at the end of a stream, broken characters included."""
        return self._release(force=True)

    def _window_text(self) -> str:
        return self.tokenizer.decode(self.token_ids[self.window_start :], self.skip_special)

    def _release(self, force: bool) -> str:
        text = self._window_text()
        stable_end = len(text) if force else len(text.rstrip(REPLACEMENT))
        new_text = text[self.num_emitted_chars : stable_end] if stable_end > self.num_emitted_chars else ""
        self.num_emitted_chars = max(self.num_emitted_chars, stable_end)
        if stable_end == len(text) and len(self.token_ids) - self.window_start > WINDOW_TOKENS:
            self._slide_window()
        return new_text

    def _slide_window(self) -> None:
        """Start the window on a character boundary: byte-fallback decoders turn a whole run of
        byte tokens into U+FFFD when it starts mid-character, which would poison what follows."""
        for start in range(len(self.token_ids) - KEEP_TOKENS, self.window_start, -1):
            text = self.tokenizer.decode(self.token_ids[start:], self.skip_special)
            if not text.startswith(REPLACEMENT):
                self.window_start = start
                self.num_emitted_chars = len(text)
                return

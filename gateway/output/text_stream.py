"""Token ids -> text for one choice, with stop strings applied at the gateway.

Text that could still turn into a stop string is held back until it cannot (or the stream ends),
so a client never sees the beginning of a stop sequence.
"""

from formats.tokenizer import GGUFTokenizer


class TextStream:
    def __init__(self, tokenizer: GGUFTokenizer, stop: list[str], min_tokens: int = 0):
        """`min_tokens`: stop strings count only from the token after that many (vLLM's)."""
        self.detokenizer = tokenizer.detokenizer(skip_special=True)
        self.stop = stop
        self.pending = ""
        self.stopped = False
        self.matched: str | None = None  # the stop string it stopped at
        self.unchecked_tokens = min_tokens

    def push(self, token_id: int) -> str:
        """New text safe to send; sets `stopped` once a stop string appears (text cut before it)."""
        if self.unchecked_tokens:
            self.unchecked_tokens -= 1
            return self.detokenizer.push(token_id)
        if not self.stop:  # nothing to hold back, nothing to stop at
            return self.detokenizer.push(token_id)
        if self.stopped:
            return ""
        self.pending += self.detokenizer.push(token_id)
        return self._release(final=False)

    def finish(self) -> str:
        if not self.stop:
            return self.detokenizer.flush()
        if self.stopped:
            return ""
        self.pending += self.detokenizer.flush()
        return self._release(final=True)

    def _release(self, final: bool) -> str:
        cut, matched = min(
            ((i, s) for s in self.stop if (i := self.pending.find(s)) >= 0), default=(-1, None)
        )
        if cut >= 0:
            self.stopped, self.matched = True, matched
            text, self.pending = self.pending[:cut], ""
            return text
        keep = 0 if final else self._longest_stop_prefix_suffix()
        text = self.pending[: len(self.pending) - keep]
        self.pending = self.pending[len(self.pending) - keep :]
        return text

    def _longest_stop_prefix_suffix(self) -> int:
        """Length of the longest tail of `pending` that is a proper prefix of some stop string."""
        best = 0
        for stop in self.stop:
            for length in range(min(len(stop) - 1, len(self.pending)), best, -1):
                if self.pending.endswith(stop[:length]):
                    best = length
                    break
        return best

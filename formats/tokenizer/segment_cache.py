"""Tokenization of prompts with special tokens parsed, segment by segment, each segment's ids cached.

Special-token text splits a prompt into fragments that are tokenized independently (llama.cpp's
tokenizer_st_partition; Hugging Face's added vocabulary does the same), so a fragment's ids never
depend on its neighbours. Chat prompts repeat fragments: the system prompt, every earlier turn of
a conversation, the template's role headers. Cached, each is tokenized once; a new request pays
for its new text only. Byte-level BPE only: a SentencePiece vocabulary's space prefix depends on
where a fragment sits.
"""

import re
import threading
from collections import OrderedDict
from collections.abc import Callable

MAX_CACHED_CHARS = 1 << 22  # all cached fragments together (~4 M characters, a few tens of MB)
MAX_FRAGMENT_CHARS = 1 << 16  # longer fragments are tokenized every time, never cached
MAX_SPECIALS = 1 << 15  # a vocabulary with more split-out tokens gets no cache (its regex would be huge)


class SegmentCache:
    """`encode(text)` == the tokenizer's own encoding of text with special tokens parsed, given
    `specials` (every text that is split out as one token -> its id) and `encode_fragment` (the
    tokenizer on text that holds none of them)."""

    def __init__(self, specials: dict[str, int], encode_fragment: Callable[[str], list[int]]):
        self._specials = specials
        self._encode_fragment = encode_fragment
        # Longest first: where two specials start at the same place the longer wins, as in
        # the tokenizers' leftmost-longest matching.
        alternatives = sorted(specials, key=len, reverse=True)
        self._split = re.compile("|".join(map(re.escape, alternatives))) if alternatives else None
        self._fragments: OrderedDict[str, list[int]] = OrderedDict()  # least recently used first
        self._cached_chars = 0
        self._lock = threading.Lock()  # the cache is shared by every thread that tokenizes

    def encode(self, text: str) -> list[int]:
        """A new list (the cached ones are never handed out)."""
        ids: list[int] = []
        if self._split is None:
            return ids + self._fragment(text) if text else ids
        start = 0
        for match in self._split.finditer(text):
            if match.start() > start:
                ids += self._fragment(text[start : match.start()])
            ids.append(self._specials[match.group()])
            start = match.end()
        if start < len(text):
            ids += self._fragment(text[start:])
        return ids

    def _fragment(self, fragment: str) -> list[int]:
        ids = self._fragments.get(fragment)
        if ids is not None:
            # Recently used: evicted last. One atomic step, so no lock: a fragment another thread
            # evicted since the lookup is simply not there any more.
            try:  # noqa: SIM105 - free when nothing is raised; suppress() is an object per hit
                self._fragments.move_to_end(fragment)
            except KeyError:
                pass
            return ids
        ids = self._encode_fragment(fragment)
        if len(fragment) <= MAX_FRAGMENT_CHARS:
            with self._lock:
                if fragment not in self._fragments:
                    self._fragments[fragment] = ids
                    self._cached_chars += len(fragment)
                while self._cached_chars > MAX_CACHED_CHARS:
                    oldest, _ = self._fragments.popitem(last=False)
                    self._cached_chars -= len(oldest)
        return ids

    @property
    def cached_chars(self) -> int:
        return self._cached_chars

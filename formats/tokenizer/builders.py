"""Build a `tokenizers.Tokenizer` that tokenizes exactly as llama.cpp does for a GGUF vocabulary."""

import numpy as np
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

from formats.errors import TokenizerError
from formats.tokenizer.pretokenizers import IGNORE_MERGES, PRE_TOKENIZER_REGEXES
from formats.tokenizer.token_types import TokenType
from formats.tokenizer.vocab import Vocab

# Types llama.cpp splits out of raw text before BPE. CONTROL and UNKNOWN only when the caller
# parses special tokens; USER_DEFINED always.
_SPECIAL_TYPES = (TokenType.CONTROL, TokenType.UNKNOWN)


def split_out_tokens(vocab: Vocab) -> list[str]:
    """The texts split out of a prompt as single tokens when special tokens are parsed."""
    split_out = np.isin(vocab.token_types, [*_SPECIAL_TYPES, TokenType.USER_DEFINED])
    return [vocab.tokens[i] for i in np.flatnonzero(split_out).tolist() if vocab.tokens[i]]


def build_tokenizer(vocab: Vocab) -> Tokenizer:
    tokenizer = _byte_level_bpe(vocab) if vocab.model == "gpt2" else _sentencepiece_bpe(vocab)
    added = []
    split_out = np.isin(vocab.token_types, [*_SPECIAL_TYPES, TokenType.USER_DEFINED])
    for token_id in np.flatnonzero(split_out).tolist():
        text = vocab.tokens[token_id]
        if text:
            special = int(vocab.token_types[token_id]) in _SPECIAL_TYPES
            added.append((token_id, AddedToken(text, special=special, normalized=False)))
    tokenizer.add_tokens([token for _, token in added])
    for token_id, token in added:
        if tokenizer.token_to_id(token.content) != token_id:
            raise TokenizerError(f"special token {token.content!r} is listed twice in the vocabulary")
    return tokenizer


def _byte_level_bpe(vocab: Vocab) -> Tokenizer:
    regexes = PRE_TOKENIZER_REGEXES.get(vocab.pre)
    if regexes is None:
        known = ", ".join(sorted(PRE_TOKENIZER_REGEXES))
        raise TokenizerError(f"unknown BPE pre-tokenizer {vocab.pre!r} (known: {known})")
    token_to_id = _token_to_id(vocab)
    merges = []
    for index, merge in enumerate(vocab.merges):
        left, right = merge.split(" ", 1)
        if left not in token_to_id or right not in token_to_id or left + right not in token_to_id:
            raise TokenizerError(f"merge #{index} {merge!r} uses a token missing from the vocabulary")
        merges.append((left, right))
    model = models.BPE(token_to_id, merges, ignore_merges=vocab.pre in IGNORE_MERGES)
    tokenizer = Tokenizer(model)
    splits = [pre_tokenizers.Split(Regex(r), behavior="isolated") for r in regexes]
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([*splits, byte_level])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _sentencepiece_bpe(vocab: Vocab) -> Tokenizer:
    """SentencePiece BPE as llama.cpp runs it: repeatedly merge the adjacent pair whose union has
    the highest score; characters outside the vocabulary fall back to <0xXX> byte tokens. The
    same result comes from BPE merges ranked by the score of the merged piece."""
    assert vocab.scores is not None
    token_to_id = _token_to_id(vocab)
    is_mergeable = np.isin(vocab.token_types, [TokenType.NORMAL, TokenType.USER_DEFINED])
    mergeable = {vocab.tokens[i]: i for i in np.flatnonzero(is_mergeable).tolist()}
    ranked = []
    for text, token_id in mergeable.items():
        for split in range(1, len(text)):
            left, right = text[:split], text[split:]
            if left in mergeable and right in mergeable:
                ranked.append((-float(vocab.scores[token_id]), token_id, mergeable[left], left, right))
    ranked.sort()
    merges = [(left, right) for *_, left, right in ranked]
    unk = vocab.tokens[vocab.unknown_token_id] if vocab.unknown_token_id is not None else None
    model = models.BPE(token_to_id, merges, unk_token=unk, byte_fallback=True, fuse_unk=True)
    tokenizer = Tokenizer(model)
    steps = [normalizers.Replace(" ", "▁")]
    if vocab.add_space_prefix:
        steps.insert(0, normalizers.Prepend("▁"))
    tokenizer.normalizer = normalizers.Sequence(steps)
    strip = [decoders.Strip(" ", 1, 0)] if vocab.add_space_prefix else []
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), *strip]
    )
    return tokenizer


def _token_to_id(vocab: Vocab) -> dict[str, int]:
    token_to_id: dict[str, int] = {}
    for token_id, text in enumerate(vocab.tokens):
        # Duplicates exist in some real vocabularies (unused slots); the first id wins, as in llama.cpp.
        token_to_id.setdefault(text, token_id)
    return token_to_id

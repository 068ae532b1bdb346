"""The vocabulary as a GGUF file describes it: the `tokenizer.ggml.*` keys, validated."""

from dataclasses import dataclass
from typing import Any

import numpy as np

from formats.errors import TokenizerError
from formats.tokenizer.token_types import TokenType

SUPPORTED_MODELS = ("gpt2", "llama")

# Texts llama.cpp treats as end-of-generation whatever the metadata says; it also forces their
# type to CONTROL, which changes how they tokenize when special tokens are not parsed.
END_OF_GENERATION_TEXTS = frozenset(
    {
        "<|eot_id|>",
        "<|im_end|>",
        "<|end|>",
        "<end_of_turn>",
        "<|endoftext|>",
        "<|eom_id|>",
        "<EOT>",
        "_<EOT>",
        "<|end_of_text|>",
        "<end_of_utterance>",
    }
)


@dataclass(frozen=True, slots=True)
class Vocab:
    """Everything needed to build a tokenizer; ids are checked to lie inside the vocabulary."""

    model: str  # "gpt2" (byte-level BPE) or "llama" (SentencePiece-style BPE with scores)
    pre: str
    tokens: list[str]
    token_types: np.ndarray  # (vocab_size,) int32 TokenType values
    scores: np.ndarray | None  # (vocab_size,) float32, SentencePiece vocabularies
    merges: list[str]
    bos_token_id: int | None
    eos_token_id: int | None
    eot_token_id: int | None
    unknown_token_id: int | None
    padding_token_id: int | None
    end_of_generation_ids: frozenset[int]  # EOS, EOT and every end-of-generation-looking token
    add_bos: bool
    add_eos: bool
    add_space_prefix: bool
    chat_template: str | None

    @property
    def size(self) -> int:
        return len(self.tokens)

    @staticmethod
    def from_metadata(metadata: dict[str, Any]) -> "Vocab":
        model = metadata.get("tokenizer.ggml.model")
        if model is None:
            raise TokenizerError("the model file has no tokenizer (tokenizer.ggml.model is missing)")
        if model not in SUPPORTED_MODELS:
            raise TokenizerError(f"unsupported tokenizer model {model!r} (supported: {SUPPORTED_MODELS})")
        tokens = metadata.get("tokenizer.ggml.tokens")
        if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) for t in tokens):
            raise TokenizerError("tokenizer.ggml.tokens must be a non-empty array of strings")
        size = len(tokens)
        token_types = _int_array(metadata, "tokenizer.ggml.token_type", size, TokenType.NORMAL)
        if np.any((token_types < TokenType.NORMAL) | (token_types > TokenType.BYTE)):
            raise TokenizerError("tokenizer.ggml.token_type holds a value outside 1..6")
        scores = metadata.get("tokenizer.ggml.scores")
        if scores is not None:
            scores = np.asarray(scores, dtype=np.float32)
            if scores.shape != (size,):
                raise TokenizerError(f"tokenizer.ggml.scores has {scores.size} entries for {size} tokens")
        merges = metadata.get("tokenizer.ggml.merges", [])
        if not isinstance(merges, list) or not all(isinstance(m, str) and " " in m for m in merges):
            raise TokenizerError("tokenizer.ggml.merges must be an array of 'left right' strings")
        if model == "gpt2" and not merges:
            raise TokenizerError("a gpt2 (BPE) vocabulary needs tokenizer.ggml.merges")
        if model == "llama" and scores is None:
            raise TokenizerError("a llama (SentencePiece) vocabulary needs tokenizer.ggml.scores")
        template = metadata.get("tokenizer.chat_template")
        end_of_generation = [i for i, text in enumerate(tokens) if text in END_OF_GENERATION_TEXTS]
        token_types = token_types.copy()
        token_types[end_of_generation] = TokenType.CONTROL
        eos_token_id = _token_id(metadata, "eos", size)
        eot_token_id = _token_id(metadata, "eot", size)
        stops = {*end_of_generation, eos_token_id, eot_token_id} - {None}
        return Vocab(
            model=model,
            pre=str(metadata.get("tokenizer.ggml.pre", "default")),
            tokens=tokens,
            token_types=token_types,
            scores=scores,
            merges=merges,
            bos_token_id=_token_id(metadata, "bos", size),
            eos_token_id=eos_token_id,
            eot_token_id=eot_token_id,
            unknown_token_id=_token_id(metadata, "unknown", size),
            padding_token_id=_token_id(metadata, "padding", size),
            end_of_generation_ids=frozenset(stops),
            add_bos=bool(metadata.get("tokenizer.ggml.add_bos_token", model == "llama")),
            add_eos=bool(metadata.get("tokenizer.ggml.add_eos_token", False)),
            add_space_prefix=bool(metadata.get("tokenizer.ggml.add_space_prefix", model == "llama")),
            chat_template=template if isinstance(template, str) else None,
        )


def _int_array(metadata: dict[str, Any], key: str, size: int, default: int) -> np.ndarray:
    values = metadata.get(key)
    if values is None:
        return np.full(size, default, dtype=np.int32)
    values = np.asarray(values)
    if values.shape != (size,) or values.dtype.kind not in "iu":
        raise TokenizerError(f"{key} must be {size} integers, one per token")
    return values.astype(np.int32)


def _token_id(metadata: dict[str, Any], name: str, size: int) -> int | None:
    key = f"tokenizer.ggml.{name}_token_id"
    value = metadata.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TokenizerError(f"{key} must be an integer")
    if not 0 <= value < size:
        # llama.cpp treats an out-of-range special id as absent (e.g. -1 stored as uint32).
        return None
    return value

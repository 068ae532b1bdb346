"""Structured output inside an engine: the vocabulary's token masks, one matcher per request.

`GrammarCompiler` belongs to an engine (or to the gateway, which checks a grammar before it
routes): it holds llguidance's view of the vocabulary, built once (about 0.2 s for 49k tokens)
from the model's tokenizer.json. `GrammarMatcher` follows one request: before each sample it masks
every token the grammar does not allow next (logits set to -inf; the end-of-generation tokens are
allowed once the grammar accepts), after it consumes the sampled token; once nothing can follow,
the request stops. Parser work per token is bounded by llguidance's limits (its "fuel").
"""

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from llguidance import LLMatcher, LLParserLimits, LLTokenizer
from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

from formats.tokenizer import GGUFTokenizer, Vocab
from shared.structured_output import GrammarError, StructuredOutputsParams

LIMITS = LLParserLimits(verbose_errors=False)  # errors go to clients: no grammar internals


class GrammarMatcher:
    """One request's position in its grammar."""

    __slots__ = ("_bitmask", "_end_ids", "_matcher", "vocab_size")

    def __init__(self, matcher: LLMatcher, vocab_size: int, end_ids: Sequence[int]):
        self._matcher = matcher
        self.vocab_size = vocab_size
        self._end_ids = np.asarray(end_ids, dtype=np.int64)
        self._bitmask = allocate_token_bitmask(1, vocab_size)  # (1, ceil(vocab / 32)) int32

    @property
    def is_finished(self) -> bool:
        """Nothing more may be generated (the grammar is complete, or the matcher failed)."""
        return self._matcher.is_stopped() or self._matcher.is_error()

    def allowed(self) -> np.ndarray:
        """(vocab_size,) bool: the tokens the grammar allows next (only the end-of-generation
        tokens once it is finished)."""
        fill_next_token_bitmask(self._matcher, self._bitmask)
        bits = np.unpackbits(self._bitmask[0].view(np.uint8), bitorder="little")
        allowed = bits[: self.vocab_size].astype(bool)
        if self.is_finished or not allowed.any():
            allowed[:] = False
            allowed[self._end_ids] = True
        return allowed

    def mask(self, logits: np.ndarray) -> None:
        """In place: logits (vocab,) of every token not allowed next become -inf (a model whose
        output layer is wider than the vocabulary has those extra rows masked too)."""
        allowed = self.allowed()
        logits[: self.vocab_size][~allowed] = -np.inf
        logits[self.vocab_size :] = -np.inf

    def accept(self, token_id: int) -> None:
        """The sampled token (always one the mask allowed); a failure leaves the matcher
        finished, so the request stops rather than running unconstrained."""
        self._matcher.consume_token(token_id)

    def accept_all(self, token_ids: Sequence[int]) -> bool:
        """Tokens an earlier attempt generated (a resumed request): whether the grammar took
        them all."""
        return not token_ids or self._matcher.consume_tokens(list(token_ids))


class GrammarCompiler:
    """An engine's structured-output support: `tokenizer_json` gives the model's tokenizer.json
    (None: this node has no tokenizer, and constrained requests are refused)."""

    def __init__(
        self,
        tokenizer_json: Callable[[], str | None],
        end_of_generation_ids: Sequence[int],
        vocab_size: int,
    ):
        self._tokenizer_json = tokenizer_json
        self._end_ids = sorted(end_of_generation_ids)
        self.vocab_size = vocab_size
        self._tokenizer: LLTokenizer | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_gguf_metadata(cls, metadata: dict[str, Any] | None, vocab_size: int) -> "GrammarCompiler":
        """From the tokenizer a GGUF file describes (built on first use); none: refused."""
        if not metadata or "tokenizer.ggml.tokens" not in metadata:
            return cls(lambda: None, (), vocab_size)
        return cls.from_vocab(Vocab.from_metadata(metadata), vocab_size)

    @classmethod
    def from_vocab(cls, vocab: Vocab, vocab_size: int) -> "GrammarCompiler":
        return cls(lambda: GGUFTokenizer(vocab).to_hf_json(), vocab.end_of_generation_ids, vocab_size)

    def tokenizer(self) -> LLTokenizer:
        with self._lock:
            if self._tokenizer is None:
                text = self._tokenizer_json()
                if text is None:
                    raise GrammarError("this node has no tokenizer, so it cannot enforce structured output")
                if not self._end_ids:
                    raise GrammarError("the model declares no end-of-generation token")
                self._tokenizer = LLTokenizer(text, n_vocab=self.vocab_size, eos_token=self._end_ids)
            return self._tokenizer

    def validate(self, params: StructuredOutputsParams) -> str:
        """The compiled grammar, checked against this vocabulary; GrammarError (its message
        fit for a client) when it cannot be enforced."""
        grammar = params.to_llguidance()
        error = LLMatcher.validate_grammar(grammar, self.tokenizer(), limits=LIMITS)
        if error:
            raise GrammarError(error)
        self._started(grammar)
        return grammar

    def matcher(self, params: StructuredOutputsParams, generated: Sequence[int] = ()) -> GrammarMatcher:
        """A fresh matcher, advanced over `generated` (tokens already produced under it)."""
        grammar = GrammarMatcher(self._started(params.to_llguidance()), self.vocab_size, self._end_ids)
        if not grammar.accept_all(generated):
            raise GrammarError("the tokens already generated do not match the grammar")
        return grammar

    def _started(self, grammar: str) -> LLMatcher:
        """A matcher over `grammar` that has computed its first token mask: a grammar llguidance
        compiles may still fail there (a schema that only refers to itself), and would then
        allow nothing but the end of generation: a GrammarError instead, before any token."""
        matcher = LLMatcher(self.tokenizer(), grammar, log_level=0, limits=LIMITS)
        if matcher.is_error():
            raise GrammarError(matcher.get_error())
        fill_next_token_bitmask(matcher, allocate_token_bitmask(1, self.vocab_size))
        if matcher.is_error():
            reason = (matcher.get_error().splitlines() or ["no token extends it"])[0]
            raise GrammarError(f"the grammar cannot produce its first token ({reason})")
        return matcher

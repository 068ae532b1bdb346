"""What the cloud engine reads from a model's tokenizer: its end-of-generation tokens and the
compiler of structured-output grammars over its vocabulary (a GGUF file's metadata, or a
checkpoint directory's tokenizer.json and config.json)."""

import json
from pathlib import Path

from shared.grammar_matcher import GrammarCompiler


def grammar_compiler(model: str, metadata, vocab_size: int) -> GrammarCompiler:
    """Structured output from the GGUF file's tokenizer, or a checkpoint's tokenizer.json (its
    end-of-generation tokens from config.json's eos_token_id)."""
    if metadata:
        return GrammarCompiler.from_gguf_metadata(metadata, vocab_size)
    directory = Path(model)
    tokenizer_path, config_path = directory / "tokenizer.json", directory / "config.json"
    if not tokenizer_path.is_file():
        return GrammarCompiler(lambda: None, (), vocab_size)
    eos = json.loads(config_path.read_text()).get("eos_token_id")
    end_ids = [eos] if isinstance(eos, int) else [i for i in eos or () if isinstance(i, int)]
    return GrammarCompiler(tokenizer_path.read_text, end_ids, vocab_size)


def end_of_generation_ids(metadata) -> frozenset[int]:
    """A GGUF file's end-of-generation tokens (none for a checkpoint directory)."""
    if not metadata or "tokenizer.ggml.tokens" not in metadata:
        return frozenset()
    from formats.tokenizer.vocab import Vocab

    return Vocab.from_metadata(metadata).end_of_generation_ids

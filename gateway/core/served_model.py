"""The models the gateway serves: tokenizer, chat template and context window of each, read once
from the model's GGUF metadata (the gateway never loads weights)."""

from dataclasses import dataclass
from pathlib import Path

from formats.chat_template import ChatTemplate, chat_template_for
from formats.gguf_reader import GGUFReader
from formats.model_config import ModelConfig
from formats.tokenizer import GGUFTokenizer
from gateway.core.model_facts import ModelFacts
from shared.grammar_matcher import GrammarCompiler


@dataclass(slots=True)
class ServedModel:
    name: str
    tokenizer: GGUFTokenizer
    chat_template: ChatTemplate
    context_length: int
    created: int
    grammars: GrammarCompiler  # checks structured-output constraints against the vocabulary
    facts: ModelFacts | None = None  # its file: size, digest, architecture (gateway/core/model_facts.py)

    @staticmethod
    def load(name: str, gguf_path: str | Path, context_length: int | None = None) -> "ServedModel":
        reader = GGUFReader(gguf_path)
        config = ModelConfig.from_reader(reader)
        tokenizer = GGUFTokenizer.from_metadata(reader.metadata)
        return ServedModel(
            name=name,
            tokenizer=tokenizer,
            chat_template=chat_template_for(reader.metadata),
            context_length=min(context_length or config.context_length, config.context_length),
            created=int(Path(gguf_path).stat().st_mtime),
            grammars=GrammarCompiler(
                tokenizer.to_hf_json, tokenizer.vocab.end_of_generation_ids, config.vocab_size
            ),
            facts=ModelFacts.read(reader, gguf_path),
        )

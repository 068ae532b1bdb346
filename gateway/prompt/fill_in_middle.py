"""Fill-in-the-middle: a completion prompt and the text after the gap (Ollama's `suffix`), laid
out with the model's own FIM tokens, the gap last: prefix token, prompt, suffix token, suffix,
middle token. A model whose vocabulary has no FIM tokens cannot fill a gap: a 400 in Ollama's
words ("<model> does not support insert")."""

from gateway.core.errors import invalid
from gateway.core.served_model import ServedModel

# (prefix, suffix, middle) as the coding model families spell them: Qwen2.5-Coder, StarCoder,
# DeepSeek-Coder, CodeGemma, Codestral
FIM_TOKENS = (
    ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
    ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
    ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
    ("<|fim_begin|>", "<|fim_hole|>", "<|fim_end|>"),
    ("[PREFIX]", "[SUFFIX]", "[MIDDLE]"),
)


def _token_id(model: ServedModel, text: str) -> int | None:
    ids = model.tokenizer.encode(text, add_special=False, parse_special=True)
    return ids[0] if len(ids) == 1 else None


def fim_tokens(model: ServedModel) -> tuple[str, str, str] | None:
    """The model's FIM tokens (their text), or None when it has none."""
    for names in FIM_TOKENS:
        if all(_token_id(model, name) is not None for name in names):
            return names
    return None


def fim_prompt_ids(model: ServedModel, prompt: str, suffix: str) -> list[int]:
    names = fim_tokens(model)
    if names is None:
        raise invalid(f"{model.name} does not support insert", "suffix", "unsupported_parameter")
    prefix_id, suffix_id, middle_id = (_token_id(model, name) for name in names)
    tokenizer = model.tokenizer
    bos = tokenizer.encode("", add_special=True)  # the BOS the model starts with, if any

    def text(part: str) -> list[int]:
        return tokenizer.encode(part, add_special=False, parse_special=False)

    return [*bos, prefix_id, *text(prompt), suffix_id, *text(suffix), middle_id]

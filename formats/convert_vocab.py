"""Hugging Face tokenizer files (tokenizer.json, tokenizer_config.json) -> `tokenizer.ggml.*` keys."""

import json
from pathlib import Path
from typing import Any

from formats.errors import ConversionError
from formats.gguf_values import GGUFValueType
from formats.gguf_writer import GGUFWriter
from formats.tokenizer.pretokenizers import GPT2, PRE_TOKENIZER_REGEXES
from formats.tokenizer.token_types import TokenType

# Original patterns as Hugging Face tokenizer.json files spell them.
_HF_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
_HF_QWEN2 = _HF_LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
_SPLIT_PATTERNS = {_HF_LLAMA3: "llama-bpe", _HF_QWEN2: "qwen2", GPT2: "gpt-2"}
GGUF_PRE_TOKENIZER_KEY = "gguf_pre_tokenizer"  # tokenizer_config.json: the name a GGUF export came from


def add_hf_vocab(writer: GGUFWriter, model_dir: Path, vocab_size: int, bos_id: Any, eos_id: Any) -> None:
    spec = _load_json(model_dir / "tokenizer.json")
    model = spec.get("model") or {}
    if model.get("type") != "BPE" or not isinstance(model.get("vocab"), dict):
        raise ConversionError("only BPE tokenizer.json files are supported")
    if model.get("byte_fallback"):
        raise ConversionError("SentencePiece-style (byte_fallback) tokenizer.json is not supported yet")
    config = _tokenizer_config(model_dir)
    pre = detect_pre_tokenizer(spec.get("pre_tokenizer"), config.get(GGUF_PRE_TOKENIZER_KEY))
    tokens, types = _tokens_and_types(model["vocab"], spec.get("added_tokens") or [], vocab_size)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges") or []]
    writer.add_string("tokenizer.ggml.model", "gpt2")
    writer.add_string("tokenizer.ggml.pre", pre)
    writer.add_bool("tokenizer.ggml.add_space_prefix", _adds_prefix_space(spec.get("pre_tokenizer")))
    writer.add_array("tokenizer.ggml.tokens", tokens, GGUFValueType.STRING)
    writer.add_array("tokenizer.ggml.token_type", [int(t) for t in types], GGUFValueType.INT32)
    writer.add_array("tokenizer.ggml.merges", merges, GGUFValueType.STRING)
    _add_special_ids(writer, model_dir, tokens, bos_id, eos_id)


def detect_pre_tokenizer(pre_tokenizer: Any, hint: Any = None) -> str:
    """Name llama.cpp uses for this pre-tokenizer, recognised from its structure. `hint` is the
    name a GGUF export recorded (several names share one set of regexes): kept if it matches."""
    steps = pre_tokenizer.get("pretokenizers", []) if isinstance(pre_tokenizer, dict) else []
    if isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") != "Sequence":
        steps = [pre_tokenizer]
    steps = [step for step in steps if isinstance(step, dict)]
    kinds = [step.get("type") for step in steps]
    exported = _exported_regexes(steps, kinds)
    if exported is not None:
        names = [name for name, regexes in PRE_TOKENIZER_REGEXES.items() if regexes == exported]
        if names:
            return hint if hint in names else names[0]
    if kinds == ["ByteLevel"] and steps[0].get("use_regex", True):
        return "gpt-2"
    if (
        kinds == ["Digits", "ByteLevel"]
        and steps[0].get("individual_digits")
        and steps[1].get("use_regex", True)
    ):
        return "smollm"
    if kinds == ["Split", "ByteLevel"] and not steps[1].get("use_regex", True):
        pattern = (steps[0].get("pattern") or {}).get("Regex")
        if pattern in _SPLIT_PATTERNS:
            return _SPLIT_PATTERNS[pattern]
    raise ConversionError(f"unrecognised pre-tokenizer {json.dumps(pre_tokenizer)[:200]}")


def _adds_prefix_space(pre_tokenizer: Any) -> bool:
    """Whether the ByteLevel step puts a space before the text (tokenizer.json states it)."""
    steps = pre_tokenizer.get("pretokenizers", [pre_tokenizer]) if isinstance(pre_tokenizer, dict) else []
    return any(
        isinstance(step, dict) and step.get("type") == "ByteLevel" and step.get("add_prefix_space") is True
        for step in steps
    )


def _exported_regexes(steps: list[dict], kinds: list[Any]) -> list[str] | None:
    """The regexes of the form our GGUF export writes (formats/tokenizer/builders.py): isolated
    Splits, then a ByteLevel without its own regex; None for any other form."""
    if len(kinds) < 2 or kinds[-1] != "ByteLevel" or steps[-1].get("use_regex", True):
        return None
    splits = steps[:-1]
    if any(s.get("type") != "Split" or s.get("behavior") != "Isolated" or s.get("invert") for s in splits):
        return None
    regexes = [(s.get("pattern") or {}).get("Regex") for s in splits]
    return regexes if all(isinstance(r, str) for r in regexes) else None


def _tokens_and_types(vocab: dict[str, int], added: list[dict], vocab_size: int):
    id_to_token = {token_id: text for text, token_id in vocab.items()}
    id_to_type = {}
    for token in added:
        id_to_token[token["id"]] = token["content"]
        id_to_type[token["id"]] = TokenType.CONTROL if token.get("special") else TokenType.USER_DEFINED
    size = max(vocab_size, max(id_to_token) + 1)
    tokens, types = [], []
    for token_id in range(size):
        if token_id in id_to_token:
            tokens.append(id_to_token[token_id])
            types.append(id_to_type.get(token_id, TokenType.NORMAL))
        else:  # the embedding matrix is padded past the tokenizer: unused slots, as llama.cpp does
            tokens.append(f"[PAD{token_id}]")
            types.append(TokenType.UNUSED)
    return tokens, types


def _add_special_ids(
    writer: GGUFWriter, model_dir: Path, tokens: list[str], bos_id: Any, eos_id: Any
) -> None:
    config = _tokenizer_config(model_dir)
    token_to_id = {text: i for i, text in enumerate(tokens)}

    def resolve(name: str, fallback: Any) -> int | None:
        value = config.get(f"{name}_token")
        text = value.get("content") if isinstance(value, dict) else value
        if isinstance(text, str) and text in token_to_id:
            return token_to_id[text]
        return fallback if isinstance(fallback, int) and 0 <= fallback < len(tokens) else None

    for name, fallback in (("bos", bos_id), ("eos", eos_id), ("unk", None), ("pad", None)):
        token_id = resolve(name, fallback)
        key = {"unk": "unknown", "pad": "padding"}.get(name, name)
        if token_id is not None:
            writer.add_uint32(f"tokenizer.ggml.{key}_token_id", token_id)
    writer.add_bool("tokenizer.ggml.add_bos_token", bool(config.get("add_bos_token", False)))
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: take the default one
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    if isinstance(template, str):
        writer.add_string("tokenizer.chat_template", template)


def _tokenizer_config(model_dir: Path) -> dict:
    path = model_dir / "tokenizer_config.json"
    return _load_json(path) if path.exists() else {}


def _load_json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConversionError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConversionError(f"{path}: cannot read ({exc})") from None
    if not isinstance(value, dict):
        raise ConversionError(f"{path}: expected a JSON object")
    return value

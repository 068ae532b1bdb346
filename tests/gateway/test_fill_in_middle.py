"""Fill-in-the-middle (Ollama's `suffix`): the prompt and suffix laid out with the model's own FIM
tokens, the gap last; a model without them refused in Ollama's words; /api/show's Go template
says `.Suffix` only for a model that has them (what Continue reads)."""

from dataclasses import dataclass

import pytest

from gateway.core.errors import APIError
from gateway.dialects.ollama_go_template import go_template
from gateway.prompt.fill_in_middle import fim_prompt_ids, fim_tokens

QWEN_FIM = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")


@dataclass
class Vocabulary:
    """Special tokens whole (ids from 1), any other character its own id (100 + its code)."""

    special: tuple[str, ...]

    def encode(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]:
        if parse_special and text in self.special:
            return [1 + self.special.index(text)]
        return [0] * add_special + [100 + ord(c) for c in text]  # 0: the BOS


@dataclass
class Model:
    name: str
    tokenizer: Vocabulary


def test_the_gap_comes_last_between_the_models_own_tokens():
    coder = Model("coder", Vocabulary(QWEN_FIM))
    assert fim_tokens(coder) == QWEN_FIM
    assert fim_prompt_ids(coder, "ab", "c") == [0, 1, 197, 198, 2, 199, 3]


def test_a_model_without_fim_tokens_does_not_support_insert():
    chat = Model("tiny", Vocabulary(("<|im_start|>", "<|im_end|>")))
    assert fim_tokens(chat) is None
    with pytest.raises(APIError) as refused:
        fim_prompt_ids(chat, "a", "b")
    assert (refused.value.status, refused.value.message, refused.value.param) == (
        400,
        "tiny does not support insert",
        "suffix",
    )


def test_the_go_template_has_a_suffix_only_with_fim_tokens():
    chatml = "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}"
    assert ".Suffix" not in go_template(chatml, None) and "{{ .Content }}" in go_template(chatml, None)
    infill = go_template(chatml, QWEN_FIM)
    assert infill.startswith("{{- if .Suffix }}<|fim_prefix|>{{ .Prompt }}<|fim_suffix|>{{ .Suffix }}")
    assert go_template("{{ messages }}", QWEN_FIM) == "{{ messages }}"  # unknown markup: its own source

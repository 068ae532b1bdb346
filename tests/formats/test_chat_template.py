"""Chat templates render like Hugging Face's, and hostile templates fail with ChatTemplateError."""

import pytest
import transformers

from formats.chat_template import CHATML_TEMPLATE, ChatTemplate, TemplateRaisedError, chat_template_for
from formats.errors import ChatTemplateError
from formats.gguf_reader import GGUFReader
from tests.fixtures.tiny_models import trained_bpe

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "What's 2+2? 日本 🎉"},
]


@pytest.mark.demo_model
@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_demo_template_renders_exactly_like_transformers(demo_model_path, add_generation_prompt):
    metadata = GGUFReader(demo_model_path).metadata
    ours = chat_template_for(metadata).render(MESSAGES, add_generation_prompt=add_generation_prompt)
    reference = transformers.PreTrainedTokenizerFast(tokenizer_object=trained_bpe())
    expected = reference.apply_chat_template(
        MESSAGES,
        chat_template=metadata["tokenizer.chat_template"],
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
    )
    assert ours == expected
    assert ours.endswith("<|im_start|>assistant\n") == add_generation_prompt


def test_chatml_fallback_when_the_model_has_none():
    template = chat_template_for({})
    assert template.is_fallback and template.source == CHATML_TEMPLATE
    assert template.render(MESSAGES[1:2]) == "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"


def test_bos_eos_and_raise_exception():
    source = (
        "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'tool' %}"
        "{{ raise_exception('tools are not supported') }}{% endif %}"
        "{{ m['content'] }}{{ eos_token }}{% endfor %}"
    )
    template = ChatTemplate(source, bos_token="<s>", eos_token="</s>")
    assert template.render([{"role": "user", "content": "a"}]) == "<s>a</s>"
    with pytest.raises(TemplateRaisedError, match="tools are not supported"):
        template.render([{"role": "tool", "content": "x"}])


def test_tojson_and_loop_controls_work():
    template = ChatTemplate(
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m|tojson }}{% endfor %}"
    )
    assert template.render(MESSAGES) == '{"role": "system", "content": "Be brief."}'


def test_messages_cannot_be_mutated_by_the_template():
    messages = [{"role": "user", "content": "x"}]
    with pytest.raises(ChatTemplateError, match="sandbox"):
        ChatTemplate("{{ messages[0].update({'role': 'system'}) }}").render(messages)
    assert messages == [{"role": "user", "content": "x"}]


HOSTILE = {
    "python internals": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "globals through a function": "{{ raise_exception.__globals__ }}",
    "cycler globals": "{{ cycler.__init__.__globals__.os }}",
    "mutating a list": "{{ messages.append(1) }}",
    "nested huge loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "huge range": "{{ range(10**9)|length }}",
    "string bomb": "{{ 'x' * 10**9 }}",
    "list bomb": "{{ [1] * 10**9 }}",
    "power bomb": "{{ 2 ** 100000000 }}",
    "str.format width": "{{ '{:>999999999}'.format(1) }}",
    "percent width": "{{ '%999999999d' % 1 }}",
    "center filter": "{{ 'a'|center(1000000000) }}",
    "indent filter": "{{ 'a\nb'|indent(1000000000, true) }}",
    "infinite recursion": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "output bomb": "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}",
    "syntax error": "{% for %}",
    "undefined call": "{{ nonexistent() }}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_templates_fail_cleanly(name):
    with pytest.raises(ChatTemplateError):
        ChatTemplate(HOSTILE[name]).render(MESSAGES)


def test_oversized_template_is_refused():
    with pytest.raises(ChatTemplateError, match="longer than"):
        ChatTemplate("x" * (256 * 1024 + 1))

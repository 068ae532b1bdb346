"""Known chat templates rendered in Python give exactly what the sandboxed Jinja rendering gives;
anything else still goes through Jinja."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.chat_template import CHATML_TEMPLATE, ChatTemplate, chat_template_for
from formats.errors import ChatTemplateError
from formats.gguf_reader import GGUFReader
from formats.native_templates import NATIVE_TEMPLATES

SOURCES = sorted(NATIVE_TEMPLATES)


def _jinja(source: str) -> ChatTemplate:
    template = ChatTemplate(source)
    template._native = None  # the sandboxed Jinja path only
    return template


MESSAGES = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), st.text(max_size=8)),
            "content": st.text(max_size=40),
        }
    ),
    max_size=6,
)


def test_the_chatml_fallback_is_rendered_natively():
    assert ChatTemplate(None)._native is not None and CHATML_TEMPLATE in NATIVE_TEMPLATES
    assert ChatTemplate(CHATML_TEMPLATE + " ")._native is None  # any other source: Jinja


@pytest.mark.slow  # 200 hypothesis examples through jinja: ~2.7 s
@settings(max_examples=200, deadline=None)
@given(which=st.integers(0, len(SOURCES) - 1), messages=MESSAGES, add_generation_prompt=st.booleans())
def test_native_rendering_equals_jinja(which, messages, add_generation_prompt):
    source = SOURCES[which]
    native = ChatTemplate(source)
    assert native._native is not None
    expected = _jinja(source).render(messages, add_generation_prompt=add_generation_prompt)
    assert native.render(messages, add_generation_prompt=add_generation_prompt) == expected


@pytest.mark.parametrize("source", SOURCES)
def test_messages_that_are_not_plain_strings_go_through_jinja(source):
    template = ChatTemplate(source)
    for bad in ([{"role": "user", "content": None}], [{"role": "user"}], [{"role": 1, "content": "x"}]):
        with pytest.raises(ChatTemplateError):
            template.render(bad)
    messages = [{"role": "user", "content": "hi"}]
    assert template.render(messages, tools=[]) == _jinja(source).render(messages, tools=[])


@pytest.mark.demo_model
def test_the_demo_models_template_is_rendered_natively(demo_model_path):
    template = chat_template_for(GGUFReader(demo_model_path).metadata)
    assert template._native is not None
    messages = [{"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi."}]
    expected = _jinja(template.source).render(messages)
    assert template.render(messages) == expected
    assert expected.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")

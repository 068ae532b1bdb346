"""Structured output: compiling constraints, the token masks they give on a real vocabulary, and
both engines' outputs always matching the constraint (random weights, random sampling)."""

import json
import re

import numpy as np
import pytest

from cloud.engine.llm_engine import LLMEngine
from edge.engine import EdgeEngine, EngineConfig
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader
from formats.tokenizer import GGUFTokenizer
from shared.batch_sampler import sample_batch
from shared.engine import EngineRequest, FinishReason, InvalidRequestError
from shared.grammar_matcher import GrammarCompiler
from shared.sampling import Sampler, SamplingParams
from shared.structured_output import GrammarError, StructuredOutputsParams

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
        "ok": {"type": "boolean"},
        "tag": {"enum": ["red", "blue"]},
    },
    "required": ["n", "ok", "tag"],
    "additionalProperties": False,
}
SELF_REFERENCE = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}  # compiles, admits nothing


@pytest.fixture(scope="module")
def tiny_path(tiny_model):
    return tiny_model(GGMLType.F32)


@pytest.fixture(scope="module")
def tokenizer(tiny_path) -> GGUFTokenizer:
    return GGUFTokenizer.from_file(tiny_path)


@pytest.fixture(scope="module")
def compiler(tiny_path) -> GrammarCompiler:
    metadata = GGUFReader(tiny_path).metadata
    return GrammarCompiler.from_gguf_metadata(metadata, len(metadata["tokenizer.ggml.tokens"]))


def _matches_schema(value) -> bool:
    return (
        set(value) == {"n", "ok", "tag"}
        and type(value["n"]) is int
        and 0 <= value["n"] <= 99
        and type(value["ok"]) is bool
        and value["tag"] in ("red", "blue")
    )


def test_exactly_one_constraint():
    with pytest.raises(GrammarError, match="exactly one"):
        StructuredOutputsParams()
    with pytest.raises(GrammarError, match="exactly one"):
        StructuredOutputsParams(regex="a", choice=("a",))
    with pytest.raises(GrammarError, match="non-empty"):
        StructuredOutputsParams(choice=())


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (StructuredOutputsParams(json="{not json"), "not valid JSON"),
        (StructuredOutputsParams(json='{"type": "strin"}'), "strin"),
        (StructuredOutputsParams(json={"type": "string", "format": "no-such-format"}), "format"),
        (StructuredOutputsParams(regex="(a"), "regex"),
        (StructuredOutputsParams(grammar="root ::= ("), "GBNF"),
        (StructuredOutputsParams(grammar="start: undefined_rule"), "undefined_rule"),
        (StructuredOutputsParams(json=SELF_REFERENCE), "cannot produce its first token"),
    ],
)
def test_what_cannot_be_enforced_is_an_error(compiler, params, message):
    with pytest.raises(GrammarError, match=message):
        compiler.validate(params)


def test_first_mask_allows_exactly_the_prefixes_of_the_choices(compiler, tokenizer):
    matcher = compiler.matcher(StructuredOutputsParams(choice=("hello", "world")))
    allowed = matcher.allowed()
    expected = np.zeros(tokenizer.vocab_size, dtype=bool)
    for token_id in range(tokenizer.vocab_size):
        piece = tokenizer.token_bytes(token_id)
        if piece and not tokenizer.is_special(token_id):
            expected[token_id] = any(c.encode().startswith(piece) for c in ("hello", "world"))
    assert expected.any()
    assert np.array_equal(allowed, expected)


def test_a_finished_grammar_allows_only_end_of_generation(compiler, tokenizer):
    matcher = compiler.matcher(StructuredOutputsParams(choice=("hello",)))
    for token_id in tokenizer.encode("hello", add_special=False):
        matcher.accept(token_id)
    assert matcher.is_finished
    assert np.flatnonzero(matcher.allowed()).tolist() == sorted(tokenizer.stop_token_ids)


def test_sampler_masks_before_choosing(compiler, tokenizer):
    grammar = compiler.matcher(StructuredOutputsParams(regex="[0-9]+"))
    logits = np.zeros(tokenizer.vocab_size, dtype=np.float32)
    logits[tokenizer.encode("hello", add_special=False)[0]] = 100.0  # the favourite is forbidden
    (token,) = sample_batch(logits[None], [Sampler(SamplingParams(temperature=0, logprobs=3), [], grammar)])
    assert re.fullmatch("[0-9]+", tokenizer.decode([token.token_id]))
    assert all(re.fullmatch("[0-9]+", tokenizer.decode([i])) for i, _ in token.top_logprobs)
    digits = sum(bool(re.fullmatch("[0-9]+", tokenizer.decode([i]))) for i in range(tokenizer.vocab_size))
    assert token.logprob == pytest.approx(-np.log(digits))  # uniform over what the grammar allows


def test_resumed_tokens_advance_the_grammar(compiler, tokenizer):
    params = StructuredOutputsParams(choice=("hello world",))
    compiler.matcher(params, tokenizer.encode("hello", add_special=False))
    with pytest.raises(GrammarError, match="do not match"):
        compiler.matcher(params, tokenizer.encode("world", add_special=False))


def _edge(path):
    return EdgeEngine(EngineConfig(str(path), num_slots=4, context_size=256))


def _cloud(path):
    return LLMEngine(str(path), num_blocks=64, block_size=16)


def _generate(engine, requests) -> dict[str, tuple[list[int], FinishReason]]:
    for request in requests:
        engine.add(request)
    tokens: dict[str, list[int]] = {}
    reasons = {}
    while engine.has_work():
        for output in engine.step().outputs:
            tokens.setdefault(output.request_id, []).append(output.token.token_id)
            if output.finish_reason is not None:
                reasons[output.request_id] = output.finish_reason
    return {r: (tokens[r], reasons[r]) for r in tokens}


@pytest.mark.parametrize("make_engine", [_edge, _cloud], ids=["edge", "cloud"])
def test_engines_output_always_matches_the_schema(tiny_path, tokenizer, make_engine):
    engine = make_engine(tiny_path)
    structured = StructuredOutputsParams(json=SCHEMA)
    requests = [
        EngineRequest(
            f"r{seed}",
            tokenizer.encode("Hello world", add_special=False),
            SamplingParams(temperature=1.0, seed=seed, max_tokens=64, structured_outputs=structured),
        )
        for seed in range(6)
    ]
    results = _generate(engine, requests)
    texts = set()
    for ids, reason in results.values():
        assert reason == FinishReason.STOP
        assert not set(ids) & tokenizer.stop_token_ids  # the grammar ended it, not a sampled EOS
        texts.add(tokenizer.decode(ids))
        assert _matches_schema(json.loads(tokenizer.decode(ids)))
    assert len(texts) > 1  # sampled, not forced to one answer


@pytest.mark.parametrize("make_engine", [_edge, _cloud], ids=["edge", "cloud"])
def test_engines_cut_at_max_tokens_say_length(tiny_path, tokenizer, make_engine):
    engine = make_engine(tiny_path)
    structured = StructuredOutputsParams(json=SCHEMA)
    params = SamplingParams(temperature=0, max_tokens=3, structured_outputs=structured)
    ids, reason = _generate(engine, [EngineRequest("cut", [5, 6, 7], params)])["cut"]
    assert reason == FinishReason.LENGTH and len(ids) == 3
    assert tokenizer.decode(ids).startswith("{")


@pytest.mark.parametrize("make_engine", [_edge, _cloud], ids=["edge", "cloud"])
@pytest.mark.parametrize(
    ("constraint", "message"),
    [
        (StructuredOutputsParams(llguidance="start: missing"), "structured output"),
        (StructuredOutputsParams(json=SELF_REFERENCE), "cannot be enforced: the grammar cannot produce"),
    ],
)
def test_engines_refuse_a_grammar_they_cannot_enforce(tiny_path, make_engine, constraint, message):
    engine = make_engine(tiny_path)
    params = SamplingParams(structured_outputs=constraint)
    with pytest.raises(InvalidRequestError, match=message):
        engine.add(EngineRequest("bad", [5, 6], params))
    assert not engine.has_work()


def test_cloud_forks_give_every_sample_its_own_grammar(tiny_path, tokenizer):
    choices = ("hello world", "general Kenobi", "quick brown fox")
    structured = StructuredOutputsParams(choice=choices)
    params = SamplingParams(temperature=1.0, seed=3, n=4, max_tokens=16, structured_outputs=structured)
    results = _generate(_cloud(tiny_path), [EngineRequest("fork", [5, 6, 7], params)])
    assert sorted(results) == ["fork", "fork#1", "fork#2", "fork#3"]
    for ids, reason in results.values():
        assert reason == FinishReason.STOP and tokenizer.decode(ids) in choices

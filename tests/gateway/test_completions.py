"""/v1/completions as evaluation harnesses use it, against a real edge node: token-id prompts,
lists of prompts, echo with the prompt's logprobs (the first one null) and max_tokens 0."""

import aiohttp
import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.tokenizer import GGUFTokenizer
from shared.engine import EngineRequest
from shared.sampling import SamplingParams
from tests.fixtures.gateway_app import Gateway, edge_config

pytestmark = pytest.mark.integration
TEXT = "Hello world! Hello there"


def _engine_prompt_logprobs(model_path, prompt_ids: list[int], top: int):
    """The prompt logprobs the edge engine computes for these ids, called directly."""
    engine = EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256))
    engine.add(
        EngineRequest("x", prompt_ids, SamplingParams(temperature=0, max_tokens=1, prompt_logprobs=top))
    )
    outputs = []
    while engine.has_work():
        outputs += engine.step().outputs
    return outputs[0].prompt_logprobs


async def test_token_id_prompts_and_lists_of_prompts(model_path, edge_node):
    tokenizer = GGUFTokenizer.from_file(model_path)
    ids = tokenizer.encode(TEXT, add_special=True)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        text = await gw.client.completions.create(model="tiny", prompt=TEXT, max_tokens=6, temperature=0)
        tokens = await gw.client.completions.create(model="tiny", prompt=ids, max_tokens=6, temperature=0)
        assert tokens.choices[0].text == text.choices[0].text
        assert tokens.usage.prompt_tokens == len(ids)
        other = await gw.client.completions.create(
            model="tiny", prompt="def add", max_tokens=6, temperature=0
        )
        batch = await gw.client.completions.create(
            model="tiny", prompt=[ids, tokenizer.encode("def add")], n=2, max_tokens=6, temperature=0
        )
        assert [c.index for c in batch.choices] == [0, 1, 2, 3]
        texts = [c.text for c in batch.choices]
        assert texts == [text.choices[0].text] * 2 + [other.choices[0].text] * 2
        assert batch.usage.prompt_tokens == len(ids) + other.usage.prompt_tokens
        strings = await gw.client.completions.create(
            model="tiny", prompt=[TEXT, "def add"], max_tokens=6, temperature=0
        )
        assert [c.text for c in strings.choices] == [text.choices[0].text, other.choices[0].text]


async def test_echo_scores_the_prompt_with_the_engines_own_logprobs(model_path, edge_node):
    tokenizer = GGUFTokenizer.from_file(model_path)
    ids = tokenizer.encode(TEXT, add_special=True)
    expected = _engine_prompt_logprobs(model_path, ids, 2)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        scored = await gw.client.completions.create(
            model="tiny", prompt=TEXT, max_tokens=0, echo=True, logprobs=2, temperature=0
        )
        choice = scored.choices[0]
        assert choice.text == TEXT and choice.finish_reason == "length"
        assert scored.usage.completion_tokens == 0
        logprobs = choice.logprobs
        assert logprobs.tokens == [tokenizer.piece(i) for i in ids]
        assert logprobs.token_logprobs[0] is None and logprobs.top_logprobs[0] is None
        assert logprobs.token_logprobs[1:] == pytest.approx([t.logprob for t in expected], abs=1e-5)
        for top, token in zip(logprobs.top_logprobs[1:], expected, strict=True):
            alternatives = {tokenizer.piece(i): lp for i, lp in reversed(token.top_logprobs)}
            assert top == pytest.approx(alternatives, abs=1e-5)
        stream = await gw.client.completions.create(
            model="tiny", prompt=TEXT, max_tokens=3, echo=True, temperature=0, stream=True
        )
        pieces = [c.choices[0].text async for c in stream]
        plain = await gw.client.completions.create(model="tiny", prompt=TEXT, max_tokens=3, temperature=0)
        assert pieces[0].startswith(TEXT) and "".join(pieces) == TEXT + plain.choices[0].text
        async with aiohttp.ClientSession() as session:
            body = {"model": "tiny", "prompt": TEXT, "max_tokens": 0}
            async with session.post(f"{gw.url}/v1/completions", json=body) as response:
                assert response.status == 400
                assert (await response.json())["error"]["param"] == "max_tokens"


async def test_return_token_ids_gives_the_generated_ids(model_path, edge_node):
    tokenizer = GGUFTokenizer.from_file(model_path)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        body = {"model": "tiny", "prompt": TEXT, "max_tokens": 6, "temperature": 0}
        extra = {"ignore_eos": True, "return_token_ids": True}
        whole = await gw.client.completions.create(**body, extra_body=extra)
        ids = whole.choices[0].model_extra["token_ids"]
        assert len(ids) == whole.usage.completion_tokens == 6
        assert tokenizer.decode(ids, skip_special=True) == whole.choices[0].text
        stream = await gw.client.completions.create(**body, stream=True, extra_body=extra)
        streamed = [i async for chunk in stream for i in chunk.choices[0].model_extra.get("token_ids", [])]
        assert streamed == ids

"""POST /v1/embeddings with the openai SDK, and Ollama's /api/embed and /api/embeddings with the
ollama client, against a real edge node: each vector is the edge engine's own embedding of the
input's tokens, floats or base64, text or token ids; what cannot be served is a clear error."""

import base64

import aiohttp
import numpy as np
import ollama
import pytest

from edge.engine import EdgeEngine, EngineConfig
from formats.tokenizer import GGUFTokenizer
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.dialects.openai_response_models import EmbeddingList
from tests.fixtures.gateway_app import Gateway, edge_config

pytestmark = pytest.mark.integration
TEXTS = ["Hello world", "The quick brown fox jumps over the lazy dog."]


def _direct(model_path, ids: list[int]) -> np.ndarray:
    return EdgeEngine(EngineConfig(str(model_path), num_slots=1, context_size=256)).embed(ids)


async def test_embeddings_are_the_engines_own(model_path, edge_node):
    tokenizer = GGUFTokenizer.from_file(model_path)
    ids = [tokenizer.encode(text, add_special=True) for text in TEXTS]
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        answer = await gw.client.embeddings.with_raw_response.create(model="tiny", input=TEXTS)
        assert answer.headers["X-Hybridgw-Target"] == "edge"
        EmbeddingList.model_validate_json(answer.text)  # the declared response model
        result = answer.parse()
        assert [d.index for d in result.data] == [0, 1]
        assert result.usage.prompt_tokens == sum(map(len, ids))
        for item, prompt in zip(result.data, ids, strict=True):
            np.testing.assert_allclose(item.embedding, _direct(model_path, prompt), atol=1e-6)
        by_ids = await gw.client.embeddings.create(model="tiny", input=ids[0])
        assert by_ids.data[0].embedding == result.data[0].embedding
        async with aiohttp.ClientSession() as session:
            body = {"model": "tiny", "input": TEXTS[0], "encoding_format": "base64"}
            async with session.post(f"{gw.url}/v1/embeddings", json=body) as response:
                packed = (await response.json())["data"][0]["embedding"]
            decoded = np.frombuffer(base64.b64decode(packed), dtype="<f4")
            np.testing.assert_array_equal(decoded, np.asarray(result.data[0].embedding, dtype=np.float32))
            for bad, param in (
                ({"input": TEXTS[0], "dimensions": 8}, "dimensions"),
                ({"input": [[10**6]]}, "input"),
                ({"input": []}, "input"),
            ):
                async with session.post(f"{gw.url}/v1/embeddings", json={"model": "tiny", **bad}) as response:
                    assert response.status == 400 and (await response.json())["error"]["param"] == param


async def test_ollamas_embed_endpoints_give_the_same_vectors(model_path, edge_node):
    tokenizer = GGUFTokenizer.from_file(model_path)
    ids = [tokenizer.encode(text, add_special=True) for text in TEXTS]
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        client = ollama.AsyncClient(host=gw.url)
        answer = await client.embed(model="tiny", input=TEXTS)
        assert answer.prompt_eval_count == sum(map(len, ids))
        for vector, prompt in zip(answer.embeddings, ids, strict=True):
            np.testing.assert_allclose(vector, _direct(model_path, prompt), atol=1e-6)
        legacy = await client.embeddings(model="tiny", prompt=TEXTS[0])
        assert list(legacy.embedding) == list(answer.embeddings[0])
        with pytest.raises(ollama.ResponseError) as caught:
            await client.embed(model="tiny", input=TEXTS[0], truncate=True)
        assert caught.value.status_code == 400 and "truncate" in caught.value.error


async def test_no_edge_node_is_503(model_path):
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:
        body = {"model": "tiny", "input": "x"}
        async with session.post(f"{gw.url}/v1/embeddings", json=body) as response:
            assert response.status == 503

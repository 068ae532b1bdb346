"""The batched sampler, on torch tensors (the cloud engine) and on numpy arrays (the edge), gives
what the per-request reference sampler gives, seed for seed."""

import numpy as np
import pytest
import torch

from shared.batch_sampler import sample_batch
from shared.sampling import Sampler, SamplingParams
from tests.fixtures.reference_sampler import reference_sample

VOCAB = 400
END_IDS = frozenset({3, 7})
PARAMS = [
    SamplingParams(temperature=0),
    SamplingParams(temperature=0, logprobs=5),
    SamplingParams(temperature=0.8, seed=11),
    SamplingParams(temperature=1.3, top_k=12, seed=12, logprobs=3),
    SamplingParams(temperature=0.9, top_p=0.6, seed=13),
    SamplingParams(temperature=1.0, min_p=0.2, seed=14),
    SamplingParams(temperature=0.7, top_k=40, top_p=0.9, min_p=0.05, seed=15),
    SamplingParams(temperature=1.1, repetition_penalty=1.3, seed=16),
    SamplingParams(temperature=0, presence_penalty=0.8, frequency_penalty=0.6),
    SamplingParams(temperature=0.6, logit_bias={5: 4.0, 9: -100.0}, seed=17),
    SamplingParams(temperature=0, min_tokens=3, logprobs=2),
    SamplingParams(temperature=2.0, seed=18, repetition_penalty=0.8, frequency_penalty=-0.5),
]


def samplers_for(params: list[SamplingParams]) -> list[Sampler]:
    prompt = list(range(20, 60))
    return [Sampler(p, prompt, end_ids=END_IDS) for p in params]


ON_TORCH, ON_NUMPY = (lambda t: t), (lambda t: t.numpy())  # the cloud's arrays, the edge's


@pytest.mark.parametrize("backend", [ON_TORCH, ON_NUMPY], ids=["torch", "numpy"])
@pytest.mark.parametrize("scale", [1.0, 6.0])  # flat and peaked distributions
def test_batch_equals_per_request_sampler_over_many_steps(scale, backend):
    generator = torch.Generator().manual_seed(0)
    reference, batched = samplers_for(PARAMS), samplers_for(PARAMS)
    for step in range(40):
        logits = torch.randn(len(PARAMS), VOCAB, generator=generator) * scale  # (R, vocab) float32
        logits[:, 3] += 5.0 * (step % 2)  # an end token often on top: min_tokens must hold it back
        expected = [reference_sample(s, row.numpy()) for s, row in zip(reference, logits, strict=True)]
        got = sample_batch(backend(logits), batched)
        assert [t.token_id for t in got] == [t.token_id for t in expected], f"step {step}"
        for want, have in zip(expected, got, strict=True):
            assert have.logprob == pytest.approx(want.logprob, abs=1e-9)
            assert [i for i, _ in have.top_logprobs] == [i for i, _ in want.top_logprobs]
            assert np.allclose([v for _, v in have.top_logprobs], [v for _, v in want.top_logprobs])
    for want, have in zip(reference, batched, strict=True):
        assert have.output_counts == want.output_counts and have.num_generated == want.num_generated


def test_min_tokens_holds_end_tokens_back_then_lets_them_through():
    logits = torch.full((1, VOCAB), -5.0)
    logits[0, 7] = 10.0  # an end-of-generation token is by far the likeliest
    sampler = samplers_for([SamplingParams(temperature=0, min_tokens=2)])
    got = [sample_batch(logits, sampler)[0].token_id for _ in range(3)]
    assert got[:2] != [7, 7] and 7 not in got[:2] and got[2] == 7


def test_truncation_keeps_only_the_allowed_tokens():
    logits = torch.arange(VOCAB, dtype=torch.float32)[None].repeat(64, 1) / 50  # (64, vocab)
    params = [SamplingParams(temperature=5.0, top_k=3, seed=i) for i in range(64)]
    drawn = {t.token_id for t in sample_batch(logits, samplers_for(params))}
    assert drawn <= {VOCAB - 1, VOCAB - 2, VOCAB - 3} and len(drawn) > 1


@pytest.mark.parametrize("backend", [ON_TORCH, ON_NUMPY], ids=["torch", "numpy"])
def test_caller_logits_are_not_changed(backend):
    logits = torch.randn(2, VOCAB)
    before = logits.clone()
    params = [SamplingParams(temperature=0, logit_bias={1: 50.0}, min_tokens=1)] * 2  # masked too
    sample_batch(backend(logits), samplers_for(params))
    assert torch.equal(logits, before)

"""The sampler: exact effects of each parameter on small hand-made distributions."""

import numpy as np
import pytest

from shared.batch_sampler import sample_batch
from shared.sampling import InvalidSamplingParams, SampledToken, Sampler, SamplingParams


def sample_one(sampler: Sampler, logits: np.ndarray) -> SampledToken:
    return sample_batch(logits[None], [sampler])[0]


LOGITS = np.log(np.array([0.05, 0.5, 0.3, 0.1, 0.05], dtype=np.float32))


def _draws(params: SamplingParams, count: int = 400, prompt=()) -> list[int]:
    sampler = Sampler(params, list(prompt))
    draws = []
    for _ in range(count):
        draws.append(sample_one(sampler, LOGITS).token_id)
        sampler.output_counts.clear()
    return draws


def test_greedy_and_logprob():
    token = sample_one(Sampler(SamplingParams(temperature=0), []), LOGITS)
    assert token.token_id == 1
    assert token.logprob == pytest.approx(np.log(0.5), abs=1e-6)


def test_same_seed_same_tokens_other_seed_other_tokens():
    params = lambda seed: SamplingParams(temperature=1.0, seed=seed)  # noqa: E731
    assert _draws(params(7)) == _draws(params(7))
    assert _draws(params(7)) != _draws(params(8))


def test_top_k_top_p_min_p_truncate():
    assert set(_draws(SamplingParams(top_k=2, seed=1))) == {1, 2}
    assert set(_draws(SamplingParams(top_p=0.79, seed=1))) == {1, 2}  # 0.5 + 0.3 reaches 0.79
    assert set(_draws(SamplingParams(min_p=0.25, seed=1))) == {1, 2}  # >= 0.25 * 0.5
    assert set(_draws(SamplingParams(top_k=1, seed=1))) == {1}


def test_temperature_sharpens():
    cold = _draws(SamplingParams(temperature=0.1, seed=3))
    warm = _draws(SamplingParams(temperature=1.0, seed=3))
    assert cold.count(1) > warm.count(1)
    assert 0.4 < warm.count(1) / len(warm) < 0.6


def test_repetition_penalty_divides_positive_and_multiplies_negative_logits():
    logits = np.array([2.0, -1.0, 1.9, 0.0], dtype=np.float32)
    sampler = Sampler(SamplingParams(temperature=0, repetition_penalty=2.0), prompt_ids=[0, 1])
    token = sample_one(sampler, logits)
    assert token.token_id == 2  # 2.0/2 = 1.0 < 1.9
    expected = np.array([1.0, -2.0, 1.9, 0.0])
    assert token.logprob == pytest.approx(1.9 - np.log(np.exp(expected).sum()), abs=1e-6)


def test_presence_and_frequency_penalties_count_generated_tokens():
    logits = np.array([3.0, 2.5, 0.0], dtype=np.float32)
    sampler = Sampler(SamplingParams(temperature=0, presence_penalty=0.2, frequency_penalty=0.2), [])
    assert [sample_one(sampler, logits).token_id for _ in range(3)] == [
        0,
        0,
        1,
    ]  # 3.0-0.4 = 2.6 > 2.5; 3.0-0.6 < 2.5


def test_top_logprobs_are_sorted_and_exact():
    token = sample_one(Sampler(SamplingParams(temperature=0, logprobs=3), []), LOGITS)
    assert [i for i, _ in token.top_logprobs] == [1, 2, 3]
    assert [lp for _, lp in token.top_logprobs] == pytest.approx(np.log([0.5, 0.3, 0.1]), abs=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"temperature": -1},
        {"top_p": 0},
        {"top_p": 1.5},
        {"min_p": 2},
        {"top_k": -1},
        {"max_tokens": 0},
        {"repetition_penalty": 0},
        {"presence_penalty": 3},
        {"logprobs": 21},
        {"temperature": float("nan")},
    ],
)
def test_invalid_parameters(kwargs):
    with pytest.raises(InvalidSamplingParams):
        SamplingParams(**kwargs)


def test_logit_bias_is_added_before_choosing():
    assert sample_one(Sampler(SamplingParams(temperature=0, logit_bias={3: 2.0}), []), LOGITS).token_id == 3
    banned = sample_one(Sampler(SamplingParams(temperature=0, logit_bias={1: -100.0}), []), LOGITS)
    assert banned.token_id == 2


def test_min_tokens_holds_back_end_and_stop_tokens_until_reached():
    params = SamplingParams(temperature=0, min_tokens=2, stop_token_ids=(2,))
    sampler = Sampler(params, [], end_ids=frozenset({1}))
    assert [sample_one(sampler, LOGITS).token_id for _ in range(3)] == [3, 3, 1]


def test_out_of_range_bias_and_min_tokens_are_refused():
    with pytest.raises(InvalidSamplingParams, match="logit_bias"):
        SamplingParams(logit_bias={1: 101.0})
    with pytest.raises(InvalidSamplingParams, match="min_tokens"):
        SamplingParams(max_tokens=4, min_tokens=5)

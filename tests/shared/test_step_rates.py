import pytest

from shared.step_rates import MIN_PREFILL_TOKENS, SMOOTHING, StepRates


def test_first_sample_is_taken_then_smoothed_per_batch_size():
    rates = StepRates()
    rates.record_step(0.5, MIN_PREFILL_TOKENS * 2, 0)  # a prefill step
    assert rates.prefill_tokens_per_s == MIN_PREFILL_TOKENS * 4
    rates.record_step(0.25, 0, 3)  # a decode-only step of 3 sequences: each got one token
    assert rates.decode_tokens_per_s == 4.0
    rates.record_step(0.1, 0, 1)  # batch 1 has its own entry: batch 3's is untouched
    assert rates.decode_steps() == ((1, 0.1), (3, 0.25))
    assert rates.decode_tokens_per_s == pytest.approx(10.0)  # the batch decoded last
    rates.record_step(0.5, 0, 3)
    smoothed = (1 - SMOOTHING) * 0.25 + SMOOTHING * 0.5
    assert rates.decode_steps() == ((1, 0.1), (3, pytest.approx(smoothed)))


def test_short_prefills_and_mixed_steps_measure_nothing():
    rates = StepRates()
    rates.record_step(0.1, MIN_PREFILL_TOKENS - 1, 0)  # mostly the step's fixed cost
    rates.record_step(0.1, 4, 2)  # neither a clean prefill nor a decode-only step
    rates.record_step(0.0, 64, 0)  # no duration: no rate
    assert (rates.prefill_tokens_per_s, rates.decode_tokens_per_s) == (0.0, 0.0)
    assert rates.decode_steps() == ()

import pytest

from shared.step_rates import MIN_PREFILL_TOKENS, SMOOTHING, StepRates


def test_first_sample_is_taken_then_smoothed():
    rates = StepRates()
    rates.record_step(0.5, MIN_PREFILL_TOKENS * 2, 0)  # a prefill step
    assert rates.prefill_tokens_per_s == MIN_PREFILL_TOKENS * 4
    rates.record_step(0.25, 0, 3)  # a decode-only step: each sequence got one token
    assert rates.decode_tokens_per_s == 4.0
    rates.record_step(0.5, 0, 1)
    assert rates.decode_tokens_per_s == pytest.approx((1 - SMOOTHING) * 4.0 + SMOOTHING * 2.0)


def test_short_prefills_and_mixed_steps_measure_nothing():
    rates = StepRates()
    rates.record_step(0.1, MIN_PREFILL_TOKENS - 1, 0)  # mostly the step's fixed cost
    rates.record_step(0.1, 4, 2)  # neither a clean prefill nor a decode-only step
    rates.record_step(0.0, 64, 0)  # no duration: no rate
    assert (rates.prefill_tokens_per_s, rates.decode_tokens_per_s) == (0.0, 0.0)

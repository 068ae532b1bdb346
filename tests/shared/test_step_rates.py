import pytest

from shared.step_rates import MIN_PREFILL_TOKENS, SMOOTHING, StepRates, step_seconds_at


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


def test_a_mixed_steps_prompt_tokens_take_the_step_less_its_decodes():
    """A step of 240 prompt tokens beside 8 decodes took 1.08 s; 8 decodes alone take 0.08 s: the
    prompt ran at 240 tokens/s, not 222. A step the decodes take most of measures nothing."""
    rates = StepRates()
    rates.record_decode(8, 0.08)
    rates.record_step(1.08, 240, 8)
    assert rates.prefill_tokens_per_s == pytest.approx(240 / (1.08 - 0.08))
    rates.record_step(0.1, MIN_PREFILL_TOKENS, 8)  # 0.02 s of prompt in a 0.1 s step
    assert rates.prefill_tokens_per_s == pytest.approx(240.0)


def test_step_time_is_interpolated_between_measured_batches():
    table = ((1, 0.01), (8, 0.08))
    assert step_seconds_at(table, 4) == pytest.approx(0.04)
    assert step_seconds_at(table, 16) == pytest.approx(0.16)  # the last two's slope
    assert step_seconds_at(((4, 0.05),), 16) == 0.05  # one point: flat
    assert step_seconds_at((), 4) is None and step_seconds_at(table, 0) is None

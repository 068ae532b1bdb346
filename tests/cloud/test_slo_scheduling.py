"""The "slo" scheduling policy and the step limits under latency targets: the shortest prompt
first with aging, a running prompt chunk yielding to a shorter waiting one, the prompt-token cap
and the running cap, and the step costs they are computed from."""

import math
import time

import pytest

from cloud.engine.block_manager import BlockManager
from cloud.engine.config import SchedulerConfig
from cloud.engine.request import Request
from cloud.engine.scheduler import Scheduler
from cloud.engine.step_budget import (
    AT_RISK_SHARE,
    MIN_PREFILL_TOKENS,
    NO_LIMITS,
    TARGET_SHARE,
    TTFT_SHARE,
    StepLimits,
    prompt_tokens_due,
    step_limits,
)
from cloud.engine.step_cost_model import StepCostModel, attended_keys
from cloud.engine.waiting_order import PATIENCE_FACTOR
from shared.sampling import SampledToken, SamplingParams
from shared.step_rates import StepRates


def _scheduler(policy="slo", budget=8, max_seqs=4) -> Scheduler:
    config = SchedulerConfig(
        max_num_seqs=max_seqs, max_num_batched_tokens=budget, long_prefill_token_threshold=8, policy=policy
    )
    return Scheduler(config, BlockManager(32, 4), max_model_len=64)


def _request(request_id, num_prompt, arrival=None, ttft_s=0.0, tpot_s=0.0, first_token=100):
    params = SamplingParams(temperature=0, max_tokens=4, ignore_eos=True)
    prompt = list(range(first_token, first_token + num_prompt))
    arrival = time.monotonic() if arrival is None else arrival
    return Request(
        request_id, prompt, params, arrival_time=arrival, ttft_target_s=ttft_s, tpot_target_s=tpot_s
    )


def _step(scheduler: Scheduler, limits: StepLimits = NO_LIMITS) -> dict[str, int]:
    output = scheduler.schedule(limits)
    sampled = {
        r.request_id: SampledToken(7, 0.0)
        for r in output.scheduled
        if r.num_computed_tokens + output.num_scheduled_tokens[r.request_id] == r.num_tokens
    }
    scheduler.update_from_output(output, sampled)
    return dict(output.num_scheduled_tokens)


@pytest.mark.parametrize(("policy", "expected"), [("fcfs", {"long": 8}), ("slo", {"short": 3, "long": 5})])
def test_the_shortest_prompt_is_admitted_first(policy, expected):
    scheduler = _scheduler(policy)
    scheduler.add_request(_request("long", 20, first_token=100))
    scheduler.add_request(_request("short", 3, first_token=200))
    assert _step(scheduler) == expected


def test_a_running_prompt_yields_its_chunk_to_a_shorter_waiting_one():
    scheduler = _scheduler()
    scheduler.add_request(_request("long", 20, first_token=100))
    assert _step(scheduler) == {"long": 8}
    scheduler.add_request(_request("short", 3, first_token=200))
    assert _step(scheduler) == {"short": 3, "long": 5}  # what "short" leaves goes to "long"
    assert _step(scheduler) == {"long": 7, "short": 1}  # nothing waits: running order again


def test_a_request_past_its_patience_goes_before_shorter_ones():
    scheduler = _scheduler()
    target_s = 1.0
    old = time.monotonic() - PATIENCE_FACTOR * target_s - 0.5
    scheduler.add_request(_request("long", 20, arrival=old, ttft_s=target_s, first_token=100))
    scheduler.add_request(_request("short", 3, first_token=200))
    assert _step(scheduler) == {"long": 8}


def test_the_prompt_cap_holds_prompt_chunks_but_never_decodes_and_the_running_cap_admission():
    scheduler = _scheduler(budget=16)
    scheduler.add_request(_request("a", 3, first_token=100))
    assert _step(scheduler) == {"a": 3}
    scheduler.add_request(_request("b", 12, first_token=200))
    assert _step(scheduler, StepLimits(prefill_tokens=2)) == {"a": 1, "b": 2}
    assert _step(scheduler, StepLimits(prefill_tokens=0)) == {"a": 1}
    scheduler.add_request(_request("c", 2, first_token=300))
    assert _step(scheduler, StepLimits(max_running=2)) == {"a": 1, "b": 8}  # "c" waits for room
    assert [r.request_id for r in scheduler.waiting] == ["c"]


def _reference() -> StepRates:
    rates = StepRates(prefill_tokens_per_s=1000.0)
    rates.record_decode(1, 0.010)
    rates.record_decode(32, 0.050)
    return rates


def _decoding(request_id: str, tpot_s: float) -> Request:
    request = _request(request_id, 4, tpot_s=tpot_s)
    request.num_computed_tokens = 4
    request.output_token_ids.append(7)  # one token behind: decoding
    request.num_computed_tokens = 4
    return request


def test_step_limits_from_the_reference_costs():
    costs = StepCostModel()
    assert step_limits([_decoding("a", 0.1)], [], costs, 64) == StepLimits()  # nothing measured
    costs.set_reference(_reference())
    running = [_decoding(f"r{i}", 0.1) for i in range(4)] + [_decoding("x", 0.0)]
    limits = step_limits(running, [], costs, max_num_seqs=64)
    decode_s = 0.010 + (0.050 - 0.010) * (5 - 1) / (32 - 1)  # the table between batch 1 and 32
    assert limits.prefill_tokens == int((TARGET_SHARE * 0.1 - decode_s) * 1000.0)
    fits = [n for n in range(1, 65) if 0.010 + 0.040 * (n - 1) / 31 + MIN_PREFILL_TOKENS / 1000 <= 0.08]
    assert limits.max_running == max(fits)
    tight = step_limits(running, [_request("w", 4, tpot_s=0.02)], costs, 64)
    assert tight.max_running == len(running)  # never below the running requests
    assert tight.prefill_tokens == int((TARGET_SHARE * 0.1 - decode_s) * 1000.0)  # decoding ones only
    assert step_limits(running[:1], [], costs, 64).prefill_tokens >= MIN_PREFILL_TOKENS
    untargeted = step_limits([_decoding("x", 0.0)], [_request("w", 4)], costs, 64)
    assert untargeted == StepLimits()


def test_the_step_cost_model_follows_the_load():
    per_key_s = 0.01 / 1000.0  # attention's share 0.01 of a token's arithmetic, per key
    costs = StepCostModel()
    costs.set_reference(_reference(), attention_ratio=0.01)
    assert costs.seconds(32, 500, 1000) == pytest.approx(0.050 + 0.5 + 1000 * per_key_s)
    for step in range(60):  # the machine now takes 2x the decode, 3x the prompt, 1.5x the attention
        num_decodes, num_prompt = 1 + step % 32, 32 * (step % 5)
        num_keys = attended_keys(100 * (step % 7), num_prompt) + 50 * num_decodes
        decode_s = 0.010 + 0.040 * (num_decodes - 1) / 31
        seconds = 2 * decode_s + 3 * num_prompt / 1000.0 + 1.5 * num_keys * per_key_s
        costs.record(seconds, num_decodes, num_prompt, num_keys)
    assert costs.scales == pytest.approx([2.0, 3.0, 1.5], rel=0.05)
    decode_keys, context = 32 * 50, 300
    within = costs.prompt_tokens_within(0.3, 32, decode_keys, context)
    fitting = [
        n for n in range(1, 200) if costs.seconds(32, n, decode_keys + attended_keys(context, n)) <= 0.3
    ]
    assert within == max(fitting)
    assert costs.decodes_within(0.2, 8, 64, keys_each=50) == max(
        n for n in range(1, 65) if costs.seconds(n, 8, 50 * n) <= 0.2
    )


def test_waiting_prompts_get_the_tokens_their_ttft_deadlines_need():
    costs = StepCostModel()
    costs.set_reference(_reference())
    now = time.monotonic()
    running = [_decoding(f"r{i}", 0.06) for i in range(4)]
    waiting = [_request(f"w{i}", 100, arrival=now, ttft_s=1.0, first_token=100 * i) for i in range(4)]
    late = _request("late", 100, arrival=now - 5.0, ttft_s=2.0)
    late.first_token_time = now - 3.0  # preempted after its first token: no TTFT left to meet
    rate = 400 / (TTFT_SHARE * 1.0)  # 400 prompt tokens due in 0.5 s
    decode_s = 0.010 + (0.050 - 0.010) * (4 - 1) / (32 - 1)
    due = math.ceil(rate * decode_s / (1 - rate / 1000.0))
    assert prompt_tokens_due([*waiting, late], costs, decode_s, now) == due
    limits = step_limits(running, [*waiting, late], costs, 64, now)
    tpot_bound = int((TARGET_SHARE * 0.06 - decode_s) * 1000.0)
    assert limits.prefill_tokens == max(due, tpot_bound) == due
    flood = [_request(f"f{i}", 600, arrival=now, ttft_s=2.0, first_token=1000 * i) for i in range(4)]
    assert prompt_tokens_due(flood, costs, decode_s, now) is None  # 2,400 tokens/s: beyond any step
    # as many as the decoding requests' saved time allows (AT_RISK_SHARE of their TPOT target):
    # 3 tokens left of 4, none spent yet
    slack_s = AT_RISK_SHARE * 0.06 * (4 - 1) - 3 * decode_s
    assert step_limits(running, flood, costs, 64, now).prefill_tokens == int(slack_s * 1000.0) > due
    for request in running:  # a second in: their budget spent, the TPOT share bounds the step
        request.first_token_time = now - 1.0
    assert step_limits(running, flood, costs, 64, now).prefill_tokens == tpot_bound
    assert step_limits(running, waiting, costs, 64, now).prefill_tokens == tpot_bound
    assert prompt_tokens_due([late], costs, decode_s, now) == 0


def test_admission_takes_more_of_the_tpot_target_when_waiting_would_miss_a_ttft_target():
    costs = StepCostModel()
    costs.set_reference(_reference())
    now = time.monotonic()
    running = [_decoding(f"r{i}", 0.1) for i in range(5)]  # 3 tokens left each: done in ~3 steps
    patient = _request("p", 4, arrival=now, ttft_s=10.0, tpot_s=0.1)
    urgent = _request("u", 4, arrival=now - 1.0, ttft_s=1.01, tpot_s=0.1)

    def fitting(seconds: float) -> int:
        return max(
            n for n in range(1, 65) if 0.010 + 0.040 * (n - 1) / 31 + MIN_PREFILL_TOKENS / 1000 <= seconds
        )

    assert fitting(TARGET_SHARE * 0.1) < fitting(AT_RISK_SHARE * 0.1) < fitting(0.1)
    assert step_limits(running, [patient], costs, 64, now).max_running == fitting(TARGET_SHARE * 0.1)
    urgent_cap = step_limits(running, [patient, urgent], costs, 64, now).max_running
    assert urgent_cap == fitting(AT_RISK_SHARE * 0.1)

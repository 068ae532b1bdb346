"""Scheduler on tiny specs: budgets, chunked prefill, admission by blocks, preemption, abort."""

from cloud.engine.block_manager import BlockManager
from cloud.engine.config import SchedulerConfig
from cloud.engine.request import Request, RequestStatus
from cloud.engine.scheduler import Scheduler
from shared.sampling import SampledToken, SamplingParams


def _scheduler(num_blocks=16, block_size=4, budget=8, max_seqs=4, chunk=8, policy="fcfs") -> Scheduler:
    config = SchedulerConfig(
        max_num_seqs=max_seqs,
        max_num_batched_tokens=budget,
        long_prefill_token_threshold=chunk,
        policy=policy,
    )
    return Scheduler(config, BlockManager(num_blocks, block_size), max_model_len=64)


def _request(request_id, num_prompt, max_tokens=4, priority=0, arrival=0.0, first_token=100):
    params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
    prompt = list(range(first_token, first_token + num_prompt))
    return Request(request_id, prompt, params, priority=priority, arrival_time=arrival)


def _step(scheduler: Scheduler, token_id: int = 7) -> dict[str, int]:
    """Schedule, pretend to run, give every caught-up request `token_id`."""
    output = scheduler.schedule()
    sampled = {
        r.request_id: SampledToken(token_id, 0.0)
        for r in output.scheduled
        if r.num_computed_tokens + output.num_scheduled_tokens[r.request_id] == r.num_tokens
    }
    scheduler.update_from_output(output, sampled)
    return dict(output.num_scheduled_tokens)


def test_one_budget_for_decodes_and_prompt_chunks():
    scheduler = _scheduler(budget=8, chunk=8)
    scheduler.add_request(_request("a", 3))
    assert _step(scheduler) == {"a": 3}
    scheduler.add_request(_request("b", 20))
    # "a" decodes (1 token) and "b"'s prompt takes the rest of the budget, chunk by chunk
    assert _step(scheduler) == {"a": 1, "b": 7}
    assert _step(scheduler) == {"a": 1, "b": 7}
    assert _step(scheduler) == {"a": 1, "b": 6}  # "b" catches up and samples
    assert _step(scheduler) == {"b": 1}  # "a" finished after 4 tokens
    assert scheduler.requests["b"].output_token_ids == [7, 7]


def test_running_cap_and_fcfs_admission():
    scheduler = _scheduler(budget=32, max_seqs=2)
    for name in "abc":
        scheduler.add_request(_request(name, 2))
    assert _step(scheduler) == {"a": 2, "b": 2}
    assert [r.request_id for r in scheduler.waiting] == ["c"]


def test_admission_waits_for_blocks_and_prefix_hits_skip_computation():
    scheduler = _scheduler(num_blocks=4, block_size=4, budget=32, chunk=32)
    scheduler.add_request(_request("a", 9, max_tokens=1))  # 3 blocks
    scheduler.add_request(_request("b", 9, max_tokens=1))  # same prompt: 2 cached blocks + 1
    assert _step(scheduler) == {"a": 9}  # only 1 block left for "b" while "a" holds 3
    assert _step(scheduler) == {"b": 1}  # "a" finished; "b" reuses its 2 full blocks (8 tokens)
    assert scheduler.block_manager.num_prefix_hits == 8


def test_preemption_takes_the_newest_and_resumes_it_with_its_tokens():
    scheduler = _scheduler(num_blocks=4, block_size=4, budget=32, chunk=32)
    scheduler.add_request(_request("old", 4, max_tokens=8))
    scheduler.add_request(_request("new", 4, max_tokens=8, first_token=200))
    assert _step(scheduler) == {"old": 4, "new": 4}  # 1 block each, both sample a token
    for _ in range(4):  # tokens 5..8 of each: a 2nd block each, all 4 blocks in use
        assert _step(scheduler) == {"old": 1, "new": 1}
    # both need a third block for token 9, none is free: "new" is preempted, "old" goes on
    output = scheduler.schedule()
    assert [r.request_id for r in output.preempted] == ["new"] and output.num_scheduled_tokens == {"old": 1}
    new = scheduler.requests["new"]
    assert new.status == RequestStatus.PREEMPTED and new.num_computed_tokens == 0
    assert new.output_token_ids == [7] * 5 and scheduler.waiting[0] is new
    scheduler.update_from_output(output, {"old": SampledToken(7, 0.0)})
    while scheduler.requests.get("old"):
        _step(scheduler)
    # resumed with prompt + its 5 tokens: "old" evicted the tail of new's freed blocks (tail
    # first), so the head block (4 tokens) is a prefix hit and 5 tokens are recomputed
    assert _step(scheduler) == {"new": 5}
    assert scheduler.num_preemptions == 1 and new.num_preemptions == 1


def test_priority_policy_orders_waiting_and_picks_the_victim():
    scheduler = _scheduler(budget=32, max_seqs=1, policy="priority")
    scheduler.add_request(_request("low", 2, priority=5, arrival=1.0))
    scheduler.add_request(_request("high", 2, priority=0, arrival=2.0))
    assert _step(scheduler) == {"high": 2}


def test_abort_frees_blocks_at_once():
    scheduler = _scheduler()
    scheduler.add_request(_request("a", 10))
    _step(scheduler)
    assert scheduler.block_manager.num_free_blocks == 14  # 8 of 10 prompt tokens: 2 blocks
    aborted = scheduler.abort_request("a")
    assert aborted.status == RequestStatus.FINISHED_ABORTED and not scheduler.has_unfinished_requests()
    assert scheduler.block_manager.num_free_blocks == 16
    assert scheduler.abort_request("a") is None


def test_priority_preemption_of_an_already_scheduled_victim_returns_its_budget():
    """running = [a, low, c, d]: "low" (priority 9) is scheduled, then "c" finds no block and
    "low" is the victim. Its token goes back to the budget and the requests after "c" are still
    visited (vLLM v1's scheduler: req_index -= 1), so "d" is served in the same step."""
    scheduler = _scheduler(num_blocks=6, block_size=4, budget=32, chunk=32, policy="priority")
    scheduler.add_request(_request("a", 4, max_tokens=8, arrival=1.0, first_token=100))
    scheduler.add_request(_request("low", 4, max_tokens=8, priority=9, arrival=2.0, first_token=200))
    assert _step(scheduler) == {"a": 4, "low": 4}  # one block each
    scheduler.add_request(_request("c", 4, max_tokens=8, arrival=3.0, first_token=300))
    scheduler.add_request(_request("d", 4, max_tokens=8, arrival=4.0, first_token=400))
    assert _step(scheduler) == {"a": 1, "low": 1, "c": 4, "d": 4}  # 6 of 6 blocks in use
    scheduler.config.max_num_batched_tokens = 3  # a, low and c fit; d only with low's token back
    output = scheduler.schedule()
    assert [r.request_id for r in output.preempted] == ["low"]
    assert output.num_scheduled_tokens == {"a": 1, "c": 1, "d": 1}
    assert [r.request_id for r in output.scheduled] == ["a", "c", "d"]
    assert scheduler.block_manager.num_free_blocks == 0


def test_priority_victim_is_the_lowest_priority_then_the_latest_arrival():
    scheduler = _scheduler(num_blocks=3, block_size=4, budget=32, chunk=32, policy="priority")
    for name, priority, arrival in (("late", 1, 3.0), ("early", 1, 2.0), ("urgent", 0, 1.0)):
        scheduler.add_request(_request(name, 4, max_tokens=8, priority=priority, arrival=arrival))
    assert _step(scheduler) == {"urgent": 4, "early": 4, "late": 4}
    output = scheduler.schedule()  # each needs a 2nd block and none is free
    assert [r.request_id for r in output.preempted] == ["late", "early"]
    assert output.num_scheduled_tokens == {"urgent": 1}


def test_a_prefix_being_computed_is_waited_for_not_computed_twice():
    scheduler = _scheduler(num_blocks=16, block_size=4, budget=32, chunk=8)
    scheduler.add_request(_request("a", 18, max_tokens=2))
    scheduler.add_request(_request("b", 18, max_tokens=2))  # a's prompt: its blocks are in flight
    scheduler.add_request(_request("c", 6, first_token=300))  # another prompt: not held back
    assert _step(scheduler) == {"a": 8, "c": 6}
    assert [r.request_id for r in scheduler.waiting] == ["b"]
    assert _step(scheduler) == {"a": 8, "c": 1}  # b's next block (tokens 8-11) is a's next chunk
    assert _step(scheduler) == {"a": 2, "c": 1, "b": 2}  # 16 of b's 18 tokens come from a's blocks
    assert scheduler.requests["b"].num_cached_tokens == 16
    assert scheduler.block_manager.num_prefix_hits == 16


def test_a_waiting_request_computes_the_prefix_itself_once_its_computer_is_gone():
    scheduler = _scheduler(num_blocks=16, block_size=4, budget=32, chunk=8)
    scheduler.add_request(_request("a", 18))
    scheduler.add_request(_request("b", 18))
    assert _step(scheduler) == {"a": 8}
    scheduler.abort_request("a")
    assert _step(scheduler) == {"b": 8}  # a's 2 computed blocks are reused, the rest computed
    assert scheduler.requests["b"].num_cached_tokens == 8


def test_without_prefix_caching_nothing_waits_for_a_prefix():
    config = SchedulerConfig(max_num_seqs=4, max_num_batched_tokens=32, long_prefill_token_threshold=8)
    scheduler = Scheduler(config, BlockManager(16, 4, enable_prefix_caching=False), max_model_len=64)
    scheduler.add_request(_request("a", 18))
    scheduler.add_request(_request("b", 18))
    assert _step(scheduler) == {"a": 8, "b": 8}


def test_a_request_waiting_for_a_prefix_keeps_its_place_under_the_running_cap():
    scheduler = _scheduler(num_blocks=16, block_size=4, budget=32, chunk=8, max_seqs=2)
    scheduler.add_request(_request("a", 18, max_tokens=8))
    scheduler.add_request(_request("b", 18, max_tokens=8))
    scheduler.add_request(_request("c", 6, first_token=300))
    assert _step(scheduler) == {"a": 8}  # b waits for a's blocks; c would take b's place
    assert _step(scheduler) == {"a": 8}
    assert _step(scheduler) == {"a": 2, "b": 2}
    assert [r.request_id for r in scheduler.waiting] == ["c"]

"""The benchmark's seeded workloads and its figures, on hand-made inputs."""

import json

import pytest

from gateway.privacy import PrivacyMode, classify
from hybridgw.bench.client import RequestResult, RunSettings, arrival_times
from hybridgw.bench.report import meets_slo, percentile, summarize
from hybridgw.bench.workloads import WORKLOADS, WorkloadError, load_workload


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_a_seed_gives_the_same_requests_and_another_seed_others(name):
    first, again, other = (load_workload(name, seed, 8) for seed in (1, 1, 2))
    assert len(first) == 8
    assert json.dumps([r.messages for r in first]) == json.dumps([r.messages for r in again])
    assert json.dumps([r.messages for r in first]) != json.dumps([r.messages for r in other])


def test_the_private_requests_of_the_mixed_workload_are_found_private_by_the_gateway():
    requests = load_workload("mixed", 0, 64)
    private = [r for r in requests if r.is_private]
    public = [r for r in requests if not r.is_private]
    assert private and public
    for request in private + public[:8]:
        texts = [m["content"] for m in request.messages]
        assert classify(texts, PrivacyMode.AUTO, None).is_private == request.is_private
    assert [r.arrival_s for r in requests[:9]] == [0.0] * 8 + [2.0]  # bursts of 8 every 2 s


def test_a_workload_file_is_read_and_a_bad_one_named(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text(
        '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "private": true}\n\n'
        '{"messages": [{"role": "user", "content": "yo"}], "max_tokens": 2, "arrival_s": 1.5}\n'
    )
    requests = load_workload(str(path), 0, None)
    assert [(r.max_tokens, r.is_private, r.arrival_s) for r in requests] == [(4, True, 0.0), (2, False, 1.5)]
    path.write_text('{"messages": [], "max_tokens": 4}\n')
    with pytest.raises(WorkloadError, match="line 1"):
        load_workload(str(path), 0, None)
    with pytest.raises(WorkloadError, match="unknown workload"):
        load_workload("no-such-workload", 0, None)


def test_poisson_arrivals_are_seeded_and_concurrency_sends_at_once():
    requests = load_workload("mixed", 0, 16)
    paced = arrival_times(requests, RunSettings("u", "m", rate=4.0, seed=3))
    assert paced == arrival_times(requests, RunSettings("u", "m", rate=4.0, seed=3))
    assert paced[0] == 0.0 and paced == sorted(paced) and 1.0 < paced[-1] < 10.0
    assert set(arrival_times(requests, RunSettings("u", "m", concurrency=4))) == {0.0}
    assert arrival_times(requests, RunSettings("u", "m")) == [r.arrival_s for r in requests]


def test_percentiles_interpolate_like_numpy():
    values = [4.0, 1.0, 3.0, 2.0]
    assert [percentile(values, q) for q in (0, 50, 90, 100)] == pytest.approx([1.0, 2.5, 3.7, 4.0])


def _result(ttft, e2e, tokens, target="edge", status=200, private=False) -> RequestResult:
    result = RequestResult("chat", private, 0.0, status, "", target, ttft, e2e, [], 10, tokens, 4)
    if status != 200:
        result.error = "failed"
    return result


def test_the_summary_counts_throughput_latency_goodput_tiers_and_privacy():
    results = [
        _result(0.1, 1.1, 11, "edge", private=True),
        _result(0.3, 2.3, 21, "cloud"),
        _result(None, None, 0, "", status=429),
    ]
    summary = summarize(results, wall_s=2.0, slo_ttft_ms=200, slo_tpot_ms=150)
    assert (summary["completed"], summary["failed"], summary["errors_by_status"]) == (2, 1, {429: 1})
    assert summary["output_throughput"] == 16.0 and summary["request_throughput"] == 1.0
    assert summary["ttft_ms"]["mean"] == pytest.approx(200.0)
    assert summary["tpot_ms"]["p50"] == pytest.approx(100.0)  # both requests: 1 s / 10, 2 s / 20
    assert summary["tier_share"] == {"cloud": 0.5, "edge": 0.5}
    assert summary["prefix_hit_rate"] == 0.4  # 4 of 10 prompt tokens each
    assert (summary["private_requests"], summary["private_on_prem"]) == (1, 1.0)
    assert (summary["goodput"], summary["slo_attainment"]) == (0.5, pytest.approx(1 / 3, abs=1e-4))
    assert not meets_slo(results[1], 200, None) and meets_slo(results[1], 300, 100)

"""What a run measured, as `vllm bench serve` reports it: throughput, TTFT, TPOT, ITL and end to
end latency (mean, p50, p90, p99, in ms), goodput under SLOs, errors by status, and for hybridgw
the share of requests per tier and the share of private requests kept on-prem."""

import collections
import statistics

from hybridgw.bench.client import RequestResult

PERCENTILES = (50, 90, 99)


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _stats_ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, **{f"p{q}": 0.0 for q in PERCENTILES}}
    ms = [v * 1000 for v in values]
    return {
        "mean": round(statistics.fmean(ms), 2),
        **{f"p{q}": round(percentile(ms, q), 2) for q in PERCENTILES},
    }


def meets_slo(result: RequestResult, slo_ttft_ms: float | None, slo_tpot_ms: float | None) -> bool:
    if not result.ok:
        return False
    if slo_ttft_ms is not None and (result.ttft_s is None or result.ttft_s * 1000 > slo_ttft_ms):
        return False
    tpot = result.tpot_s
    return slo_tpot_ms is None or tpot is None or tpot * 1000 <= slo_tpot_ms


def summarize(
    results: list[RequestResult],
    wall_s: float,
    slo_ttft_ms: float | None = None,
    slo_tpot_ms: float | None = None,
) -> dict:
    done = [r for r in results if r.ok]
    output_tokens = sum(r.output_tokens for r in done)
    prompt_tokens = sum(r.prompt_tokens for r in done)
    wall = max(wall_s, 1e-9)
    private = [r for r in results if r.is_private]
    summary = {
        "num_requests": len(results),
        "completed": len(done),
        "failed": len(results) - len(done),
        "duration_s": round(wall_s, 3),
        "request_throughput": round(len(done) / wall, 3),
        "output_throughput": round(output_tokens / wall, 2),
        "total_token_throughput": round((prompt_tokens + output_tokens) / wall, 2),
        "total_output_tokens": output_tokens,
        "total_prompt_tokens": prompt_tokens,
        "prefix_hit_rate": round(sum(r.cached_tokens for r in done) / max(1, prompt_tokens), 4),
        "ttft_ms": _stats_ms([r.ttft_s for r in done if r.ttft_s is not None]),
        "tpot_ms": _stats_ms([r.tpot_s for r in done if r.tpot_s is not None]),
        "itl_ms": _stats_ms([gap for r in done for gap in r.itl_s]),
        "e2el_ms": _stats_ms([r.e2e_s for r in done if r.e2e_s is not None]),
        "errors_by_status": dict(sorted(collections.Counter(r.status for r in results if not r.ok).items())),
        "tier_share": _shares([r.target or "unknown" for r in done]),
        "private_requests": len(private),
        "private_on_prem": (
            round(sum(1 for r in private if r.target != "cloud") / len(private), 4) if private else None
        ),
    }
    if slo_ttft_ms is not None or slo_tpot_ms is not None:
        good = [r for r in results if meets_slo(r, slo_ttft_ms, slo_tpot_ms)]
        summary["goodput"] = round(len(good) / wall, 3)
        summary["slo_attainment"] = round(len(good) / max(1, len(results)), 4)
        summary["slo"] = {"ttft_ms": slo_ttft_ms, "tpot_ms": slo_tpot_ms}
    return summary


def _shares(labels: list[str]) -> dict[str, float]:
    counts = collections.Counter(labels)
    total = max(1, len(labels))
    return {label: round(count / total, 4) for label, count in sorted(counts.items())}


def format_table(summary: dict) -> str:
    """The summary as `vllm bench serve` prints it: one line per figure."""
    lines = [
        "{s:{c}^60}".format(s=" Serving Benchmark Result ", c="="),
        f"{'Successful requests:':<40}{summary['completed']:>20}",
        f"{'Failed requests:':<40}{summary['failed']:>20}",
        f"{'Benchmark duration (s):':<40}{summary['duration_s']:>20.2f}",
        f"{'Total generated tokens:':<40}{summary['total_output_tokens']:>20}",
        f"{'Prompt tokens from a prefix cache:':<40}{summary['prefix_hit_rate']:>20.1%}",
        f"{'Request throughput (req/s):':<40}{summary['request_throughput']:>20.2f}",
        f"{'Output token throughput (tok/s):':<40}{summary['output_throughput']:>20.2f}",
        f"{'Total token throughput (tok/s):':<40}{summary['total_token_throughput']:>20.2f}",
    ]
    if "goodput" in summary:
        lines.append(f"{'Request goodput (req/s):':<40}{summary['goodput']:>20.2f}")
        lines.append(f"{'SLO attainment:':<40}{summary['slo_attainment']:>20.2%}")
    for key, title in (
        ("ttft_ms", "Time to First Token"),
        ("tpot_ms", "Time per Output Token (excl. 1st token)"),
        ("itl_ms", "Inter-token Latency"),
        ("e2el_ms", "End-to-end Latency"),
    ):
        lines.append("{s:{c}^60}".format(s=f" {title} ", c="-"))
        stats = summary[key]
        lines.append(f"{'Mean (ms):':<40}{stats['mean']:>20.2f}")
        for q in PERCENTILES:
            lines.append(f"{f'P{q} (ms):':<40}{stats[f'p{q}']:>20.2f}")
    lines.append("{s:{c}^60}".format(s=" Where it ran ", c="-"))
    for tier, share in summary["tier_share"].items():
        lines.append(f"{tier + ':':<40}{share:>20.1%}")
    if summary["private_on_prem"] is not None:
        lines.append(f"{'Private requests kept on-prem:':<40}{summary['private_on_prem']:>20.1%}")
    for status, count in summary["errors_by_status"].items():
        lines.append(f"{f'Errors, status {status}:':<40}{count:>20}")
    lines.append("=" * 60)
    return "\n".join(lines)

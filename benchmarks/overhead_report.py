"""The tables of benchmarks/gateway_overhead.py, and its CI guard's verdict."""

LABELS = {
    "null_proxy": "null proxy (HTTP in, the node's Session out, no gateway work), for the hop's own cost",
    "gateway_no_ledger": "the gateway without its privacy ledger (the ledger's share apart)",
    "litellm": "LiteLLM's proxy in front of an OpenAI-chunk null proxy (benchmarks/litellm_proxy.py)",
    "generate": "one Generate call per request, direct",
    "aiohttp": "aiohttp client, through the gateway",
    "baseline": "the baseline gateway, same client as the gateway path",
}


def print_results(results: dict, args) -> None:
    print(f"{args.tokens} tokens per streamed request, one every {args.step_ms} ms; gateway on one core")
    header = ("clients", "direct TTFT", "gw TTFT", "added TTFT", "added p50", "added p99", "gw req/s")
    print("{:>8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9}".format(*header))
    for concurrency, row in results.items():
        cells = (
            row["direct_ttft_ms"]["p50"],
            row["gateway_ttft_ms"]["p50"],
            row["added_ttft_ms"]["p50"],
            row["added_ms"]["p50"],
            row["added_ms"]["p99"],
        )
        print(
            f"{concurrency:>8} "
            + " ".join(f"{value:>9.2f}ms" for value in cells)
            + f" {row['gateway_requests_per_s']:>9.0f}"
        )
    print("for reference (p50 TTFT / whole stream, requests per s; added TTFT p50 over direct):")
    first = next(iter(results.values()))
    for name, label in LABELS.items():
        if name not in first:
            continue
        print(f"  {label}")
        for concurrency, row in results.items():
            ref = row[name]
            added = ref["ttft_ms"]["p50"] - row["direct_ttft_ms"]["p50"]
            print(
                f"{concurrency:>8} {ref['ttft_ms']['p50']:>9.2f}ms {ref['total_ms']['p50']:>9.2f}ms"
                f" {ref['requests_per_s']:>9.0f} {added:>9.2f}ms"
            )
    print("the gateway / the others, same run (TTFT p50, added TTFT p50, requests per s):")
    for name in ("null_proxy", "gateway_no_ledger", "litellm", "baseline"):
        if name in first:
            print(f"  / {name}")
            for concurrency, row in results.items():
                print(f"{concurrency:>8} " + " ".join(f"{r:>9.3f}" for r in _ratios(row, name)))


def _ratios(row: dict, name: str) -> tuple[float, float, float]:
    ours, theirs = row["gateway_ttft_ms"]["p50"], row[name]["ttft_ms"]["p50"]
    direct = row["direct_ttft_ms"]["p50"]
    added = (ours - direct) / (theirs - direct) if theirs != direct else float("inf")
    return ours / theirs, added, row["gateway_requests_per_s"] / row[name]["requests_per_s"]


def guard(results: dict, max_ttft_ratio: float, max_cost_ratio: float) -> int:
    """0 when the gateway's TTFT p50 at the fewest clients is within `max_ttft_ratio` of the
    null proxy's and its time per request at the most (the null proxy's requests/s over its
    own) within `max_cost_ratio`; 1 (and why) otherwise."""
    fewest, most = results[min(results)], results[max(results)]
    ttft = fewest["gateway_ttft_ms"]["p50"] / fewest["null_proxy"]["ttft_ms"]["p50"]
    cost = most["null_proxy"]["requests_per_s"] / most["gateway_requests_per_s"]
    print(
        f"guard: TTFT p50 {ttft:.2f}x the null proxy's at {min(results)} client(s) (at most {max_ttft_ratio})"
    )
    print(
        f"guard: time per request {cost:.2f}x the null proxy's at {max(results)} clients"
        f" (at most {max_cost_ratio})"
    )
    if ttft > max_ttft_ratio or cost > max_cost_ratio:
        print("guard: FAILED: the gateway's own cost grew past its ratio to the null proxy's")
        return 1
    return 0

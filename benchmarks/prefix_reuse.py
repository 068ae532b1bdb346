"""Prefix reuse, measured: the shared-prefix workload (four long system prompts, each shared by a
quarter of the requests) through `hybridgw up` with prefix caching on both tiers and with it off
(`--no-prefix-caching`), alternating rounds; medians of TTFT and the share of prompt tokens served
from a cache.

    .venv/bin/python benchmarks/prefix_reuse.py [--rounds 2] [--num-requests 32]
"""

import argparse
import json
import statistics
import sys

from routing import MODEL_NAME, ROOT, System, free_port, measure_summary  # beside this script


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--num-requests", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    variants = {"prefix caching on": [], "prefix caching off": ["--no-prefix-caching"]}
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    for round_index in range(args.rounds):
        order = list(variants) if round_index % 2 == 0 else list(reversed(variants))
        for name in order:
            port = free_port()
            command = [str(ROOT / ".venv/bin/hybridgw"), "up", "--port", str(port), *variants[name]]
            system = System(name.replace(" ", "-"), command, port, "/health/ready", MODEL_NAME)
            print(f"round {round_index + 1}/{args.rounds}: {name}", file=sys.stderr)
            system.start()
            try:
                runs[name].append(measure_summary(system, "shared-prefix", args.seed, args.num_requests))
            finally:
                system.stop()
    rows = []
    for name, summaries in runs.items():
        rows.append(
            {
                "variant": name,
                "prefix_hit_rate": statistics.median(s["prefix_hit_rate"] for s in summaries),
                "ttft_p50_ms": statistics.median(s["ttft_ms"]["p50"] for s in summaries),
                "ttft_p99_ms": statistics.median(s["ttft_ms"]["p99"] for s in summaries),
                "output_tok_s": statistics.median(s["output_throughput"] for s in summaries),
            }
        )
    (ROOT / "benchmarks" / "results" / "prefix_reuse.json").write_text(
        json.dumps({"runs": runs, "medians": rows}, indent=2) + "\n"
    )
    print("| variant | prompt tokens from cache | TTFT p50 (ms) | TTFT p99 (ms) | output tok/s |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['variant']} | {row['prefix_hit_rate']:.1%} | {row['ttft_p50_ms']:.0f} | "
            f"{row['ttft_p99_ms']:.0f} | {row['output_tok_s']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

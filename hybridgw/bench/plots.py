"""PNG plots of a run (matplotlib, no display): latency CDFs, throughput and tier share over time."""

from pathlib import Path

from hybridgw.bench.client import RequestResult

BIN_S = 1.0


def plot_run(results: list[RequestResult], wall_s: float, path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    done = [r for r in results if r.ok and r.e2e_s is not None]
    figure, (cdf, throughput, tiers) = pyplot.subplots(1, 3, figsize=(15, 4.2))
    figure.suptitle(title)
    for label, values in (
        ("TTFT", [r.ttft_s for r in done if r.ttft_s is not None]),
        ("end to end", [r.e2e_s for r in done]),
    ):
        ordered = sorted(values)
        cdf.plot(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], label=label)
    cdf.set(xlabel="seconds", ylabel="share of requests", title="Latency CDF")
    cdf.legend()
    num_bins = max(1, int(wall_s / BIN_S) + 1)
    tokens_per_bin = [0.0] * num_bins
    for result in done:  # each request's tokens spread evenly from its first token to its end
        first = result.started_s + (result.ttft_s or 0.0)
        end = result.started_s + result.e2e_s
        for index in range(int(first / BIN_S), int(end / BIN_S) + 1):
            overlap = min(end, (index + 1) * BIN_S) - max(first, index * BIN_S)
            if overlap > 0 and index < num_bins:
                tokens_per_bin[index] += result.output_tokens * overlap / max(end - first, 1e-9)
    times = [i * BIN_S for i in range(num_bins)]
    throughput.plot(times, [t / BIN_S for t in tokens_per_bin])
    throughput.set(xlabel="seconds", ylabel="output tokens/s", title="Throughput over time")
    labels = sorted({r.target or "unknown" for r in done})
    started = {label: [0] * num_bins for label in labels}
    for result in done:
        started[result.target or "unknown"][min(num_bins - 1, int(result.started_s / BIN_S))] += 1
    tiers.stackplot(times, *[started[label] for label in labels], labels=labels)
    tiers.set(xlabel="seconds", ylabel="requests sent per second", title="Where requests ran")
    if labels:
        tiers.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return path

"""An upstream's load and speed from its Prometheus text exposition: vLLM's, llama-server's or a
hybridgw gateway's own request gauges and KV-cache use, and the decode and prefill rates all of
its clients see (vLLM's and hybridgw's latency histograms, between two polls; llama-server's
average throughput gauges) — what the router predicts from before this gateway has sent it a
request, and what keeps the prediction right while others load it."""

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

# the gauges servers export for their requests: vLLM, llama-server, hybridgw (running, waiting)
REQUEST_GAUGES = {
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "llamacpp:requests_processing",
    "llamacpp:requests_deferred",
    "hybridgw_requests_in_flight",
}
KV_GAUGES = {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "llamacpp:kv_cache_usage_ratio"}
# histograms of seconds per output token (their mean between polls: 1 / the decode rate)
TOKEN_LATENCY_HISTOGRAMS = (
    "vllm:inter_token_latency_seconds",
    "vllm:time_per_output_token_seconds",
    "hybridgw_time_per_output_token_seconds",
)
# vLLM's prompt tokens and prefill seconds per request (their sums' ratio: the prefill rate)
PROMPT_TOKENS_SUM, PREFILL_SECONDS_SUM = (
    "vllm:request_prompt_tokens_sum",
    "vllm:request_prefill_time_seconds_sum",
)
RATE_GAUGES = {  # llama-server's average throughputs, tokens per second
    "llamacpp:prompt_tokens_seconds": "prefill",
    "llamacpp:predicted_tokens_seconds": "decode",
}


@dataclass(frozen=True, slots=True)
class MetricsReading:
    requests: int  # running + waiting there, from every client
    kv_usage: float  # 0..1
    prefill_tokens_per_s: float | None = None  # None: its metrics do not say
    decode_tokens_per_s: float | None = None  # per sequence


class UpstreamMetrics:
    """Reads one upstream's metrics poll after poll (latency histograms are cumulative: the
    rates come from what changed since the previous poll, or since its start at the first)."""

    def __init__(self):
        self._previous: dict[str, float] = {}

    def read(self, text: str) -> MetricsReading | None:
        """None when it has none of the known request gauges (or is not Prometheus text)."""
        try:
            values = _sum_by_name(text)
        except (ValueError, TypeError, IndexError):  # not Prometheus text
            return None
        if not REQUEST_GAUGES & values.keys():
            return None
        requests = sum(values.get(name, 0.0) for name in REQUEST_GAUGES)
        kv_usage = max((values[name] for name in KV_GAUGES if name in values), default=0.0)
        rates = {kind: values[name] for name, kind in RATE_GAUGES.items() if values.get(name, 0) > 0}
        decode = self._per_second(values, TOKEN_LATENCY_HISTOGRAMS) or rates.get("decode")
        prefill = self._ratio(values, PROMPT_TOKENS_SUM, PREFILL_SECONDS_SUM) or rates.get("prefill")
        self._previous = values
        return MetricsReading(int(requests), min(1.0, max(0.0, kv_usage)), prefill, decode)

    def _per_second(self, values: dict[str, float], histograms: tuple[str, ...]) -> float | None:
        """1 / the mean of the first histogram that has new observations."""
        for name in histograms:
            seconds = self._ratio(values, f"{name}_sum", f"{name}_count")
            if seconds:
                return 1.0 / seconds
        return None

    def _ratio(self, values: dict[str, float], numerator: str, denominator: str) -> float | None:
        """Δnumerator / Δdenominator since the previous poll; None when nothing changed."""
        if numerator not in values or denominator not in values:
            return None
        top = values[numerator] - self._previous.get(numerator, 0.0)
        bottom = values[denominator] - self._previous.get(denominator, 0.0)
        return top / bottom if top > 0 and bottom > 0 else None


def _sum_by_name(text: str) -> dict[str, float]:
    """Every sample's value, summed over its labels (a server per model, a histogram's buckets
    kept apart by name)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + float(sample.value)
    return values

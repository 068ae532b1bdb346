"""An upstream's load from its Prometheus text exposition (vLLM's, llama-server's or a hybridgw
gateway's own request gauges and KV-cache use)."""

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


def upstream_load(text: str) -> tuple[int, float] | None:
    """(requests there, KV-cache use 0..1); None when it has none of the known gauges (or is
    not Prometheus text)."""
    requests, kv_usage, found = 0.0, 0.0, False
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name in REQUEST_GAUGES:
                    requests, found = requests + sample.value, True
                elif sample.name in KV_GAUGES:
                    kv_usage = max(kv_usage, sample.value)
    except (ValueError, TypeError, IndexError):  # not Prometheus text
        return None
    return (int(requests), min(1.0, kv_usage)) if found else None

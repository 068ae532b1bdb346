"""`hybridgw bench serve`: replay a seeded workload against any OpenAI-compatible server (ours,
llama-server, vLLM) and report what `vllm bench serve` reports, plus where hybridgw ran each
request."""

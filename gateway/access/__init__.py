"""Who may use the gateway: a request's API key found among the configured ones and the models it
may use (api_keys.py), and per-key rate limits (rate_limit.py). The keys themselves, their tenants,
privacy modes and limits, are configuration (gateway/config/gateway_config.py, keys_file.py).

May import: core/, privacy/, config/."""

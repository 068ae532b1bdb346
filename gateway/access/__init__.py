"""Who may use the gateway: API keys and their tenants, privacy modes and allowed models
(api_keys.py), keys read from a TOML file (keys_file.py) and per-key rate limits (rate_limit.py).

May import: core/, privacy/."""

"""The gateway's configuration: the typed settings (gateway_config.py; the API keys: api_key.py) and
the TOML files they are read from, every field overridable from the environment (toml_file.py,
toml_sections.py; a keys file: keys_file.py).

May import: core/, access/, privacy/, routing/ (the profiles [routing] names)."""

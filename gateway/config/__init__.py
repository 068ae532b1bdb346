"""The gateway's configuration: the typed settings (gateway_config.py) and the TOML file they are
read from, every field overridable from the environment (toml_file.py, toml_sections.py).

May import: core/, access/, privacy/, routing/ (the profiles [routing] names)."""

"""The `hybridgw` program's own tools, beside the services it composes (gateway, edge, cloud)."""

"""Where a request runs: the nodes' live state (node_state.py, node_load.py), the request and
decision types (route_types.py), and the policy that predicts each node's latency and chooses
(policy.py). Backends import the state and types, never the policy."""

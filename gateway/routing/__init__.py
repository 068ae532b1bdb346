"""Where a request runs: the nodes' live state (node_state.py, node_load.py), the request and
decision types (route_types.py), each node's prediction (prediction.py), and the rules as plugins
(plugin.py: Filter, Scorer, Picker; one per file under filters/, scorers/, pickers/; all named in
registry.py) composed into profiles (profile.py, profiles.py). The gateway routes through
router.py (`Router.pick(request, exclude)`); policy.py is the same as a pure function. Backends
import the state and types, never a plugin or a profile."""

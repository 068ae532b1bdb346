"""From a prepared request to its first tokens. The Dispatcher (dispatcher.py) runs it: what would
leave the gateway, built once (outbound_messages.py); the privacy gate that classifies it and records
each decision before anything leaves (privacy_gate.py, recorded_dispatch.py); placement, the router's
pick with the prompt's prefix-cache hits (placement.py, prefix_cache.py, cache_affinity.py); every
choice launched on its node (launch.py) and retried on another (choice_attempts.py); what a node's
failure does to the node and where the request goes then (failover.py: breakers, retries,
first-token deadlines, resumes); the answer to a request no node can take (unplaced_answers.py).

Calls go down only: the Dispatcher composes the gate, placement and failover; a choice whose node
fails mid-stream calls `Failover.resume`, never back into the Dispatcher.

May import: everything below it: core/, prompt/, tools/, privacy/, routing/, observability/, config/,
backends/, output/, request/. Never serving/ or http/."""

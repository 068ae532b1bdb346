"""From a routed request to its first tokens: the Dispatcher (dispatcher.py), what leaves the
gateway for each choice (outbound_messages.py), launching a choice on its node (choice_launch.py) and
retrying it on another (choice_attempts.py, node_failures.py), the privacy record before any dispatch
(recorded_dispatch.py), cache affinity, and the answer to a request no node can take
(unplaced_answers.py).

May import: everything below it: core/, prompt/, tools/, privacy/, routing/, observability/, config/,
backends/, output/, request/. Never serving/ or http/."""

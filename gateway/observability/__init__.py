"""What the gateway tells its operators: Prometheus metrics (metrics.py), the status page's
recent activity (activity.py) and request ids (request_ids.py).

May import: nothing else in gateway/."""

"""Every Redis key hybridgw uses, under one configurable prefix (default "hybridgw:").

The cloud keys all live under `{prefix}cloud:` so a worker's Redis user can be limited to them
(ACL `~{prefix}cloud:*`).
"""

from dataclasses import dataclass

DEFAULT_PREFIX = "hybridgw:"


@dataclass(frozen=True, slots=True)
class RedisKeys:
    prefix: str = DEFAULT_PREFIX

    @property
    def request_stream(self) -> str:
        return f"{self.prefix}cloud:requests"

    @property
    def consumer_group(self) -> str:
        return "cloud-workers"

    def direct_stream(self, worker_name: str) -> str:
        """Requests the gateway sends to one worker (it holds their prompt's prefix in its cache)."""
        return f"{self.prefix}cloud:direct:{worker_name}"

    @property
    def worker_directory(self) -> str:
        """A hash of every worker that has a direct stream (name -> when it last beat), so a
        worker finds the streams of dead ones without SCAN (its Redis user may not run it)."""
        return f"{self.prefix}cloud:workers"

    def reply_stream(self, request_id: str) -> str:
        return f"{self.prefix}cloud:reply:{request_id}"

    def fence(self, request_id: str) -> str:
        """Which worker's turn at the request may write its reply stream (cloud/worker/fenced_reply.py)."""
        return f"{self.prefix}cloud:fence:{request_id}"

    def cancel_flag(self, request_id: str) -> str:
        return f"{self.prefix}cloud:cancel:{request_id}"

    def worker_heartbeat(self, name: str) -> str:
        return f"{self.prefix}cloud:worker:{name}"

    @property
    def worker_pattern(self) -> str:
        return f"{self.prefix}cloud:worker:*"

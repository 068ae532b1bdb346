"""How the cloud pool's Redis failed, as the client is told: out of memory (maxmemory reached
under `noeviction`: nothing more can be written, while reads still work) is not an outage or a
restart, and the operator's fix differs (memory, not the network), so each has its own code."""

from redis.exceptions import OutOfMemoryError, RedisError, ResponseError

from gateway.backends.base import BackendError

OUT_OF_MEMORY = "cloud_redis_out_of_memory"
LOST_REQUEST = "cloud_redis_lost_request"
UNREACHABLE = "cloud_redis_unreachable"


def is_out_of_memory(error: RedisError) -> bool:
    """Redis's `-OOM command not allowed when used memory > 'maxmemory'` (redis-py raises
    OutOfMemoryError for it; a script's write refused inside EVALSHA may come as a ResponseError
    quoting it)."""
    return isinstance(error, OutOfMemoryError) or (
        isinstance(error, ResponseError) and "OOM command not allowed" in str(error)
    )


def out_of_memory(what: str) -> BackendError:
    return BackendError(
        f"the cloud pool's Redis is out of memory (maxmemory reached): {what}", 503, code=OUT_OF_MEMORY
    )


def lost_request() -> BackendError:
    return BackendError("the cloud pool lost the request (its Redis restarted)", 503, code=LOST_REQUEST)


def unreachable(error: RedisError) -> BackendError:
    return BackendError(
        f"the cloud pool's Redis is unreachable ({type(error).__name__})", 503, code=UNREACHABLE
    )

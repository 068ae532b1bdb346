"""The Redis client every service uses: a command that meets a connection Redis closed (it
restarted, a proxy dropped it) is retried on a fresh one with backoff, and idle pooled
connections are checked before use, so one restart costs a retry, not the request."""

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

RETRIES = 3
HEALTH_CHECK_INTERVAL_S = 5


def connect(url: str) -> aioredis.Redis:
    return aioredis.from_url(
        url,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), RETRIES),
        retry_on_error=[RedisConnectionError, RedisTimeoutError, ConnectionResetError],
        health_check_interval=HEALTH_CHECK_INTERVAL_S,
    )

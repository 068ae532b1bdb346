"""Per-request work that can take more than about a millisecond (templating and tokenizing a long
prompt, /tokenize, compiling a grammar, the privacy scan of a long request) runs on a worker
thread, never on the event loop: a 900 KB prompt held the loop, and with it every other request
and /health/live, for 2 s. Such jobs share WORKERS threads (more only contend for the GIL with
the loop) and at most QUEUE wait; past that a request gets 429 at once instead of a place in a
line that only grows. Small jobs (the common case) run inline: a thread hop costs more.

The work releases the GIL where it is long (the tokenizer encodes long texts through
`encode_batch`; llguidance compiles grammars outside the GIL), and the gateway asks the
interpreter to switch threads every millisecond rather than every 5 (gateway/http/app.py), so the
loop waits at most a few milliseconds for its turn.
"""

import asyncio
from collections.abc import Callable
from typing import TypeVar

from gateway.core.errors import APIError

INLINE_CHARS = 4096  # below this a job runs inline (templating and tokenizing 4 KB: ~1 ms)
WORKERS, QUEUE = 2, 64
T = TypeVar("T")


class _Slots:
    def __init__(self):
        self.semaphore, self.waiting = asyncio.Semaphore(WORKERS), 0


_PER_LOOP: dict[asyncio.AbstractEventLoop, _Slots] = {}


def _slots() -> _Slots:
    loop = asyncio.get_running_loop()
    if loop not in _PER_LOOP:
        _PER_LOOP.clear()  # one loop per gateway process (tests run several, one after another)
        _PER_LOOP[loop] = _Slots()
    return _PER_LOOP[loop]


async def off_loop(size: int, function: Callable[..., T], *args) -> T:
    """`function(*args)`, on a worker thread when `size` (characters of input) is large."""
    if size < INLINE_CHARS:
        return function(*args)
    slots = _slots()
    if slots.waiting >= QUEUE:
        message = "Too many large requests are being prepared; retry shortly."
        raise APIError(429, message, "rate_limit_error", code="busy", headers={"Retry-After": "1"})
    slots.waiting += 1
    try:
        async with slots.semaphore:
            return await asyncio.to_thread(function, *args)
    finally:
        slots.waiting -= 1

"""Request ids: 128 random bits as 32 hex digits. An id names a request, it guards nothing, so it
comes from a generator seeded by the OS once per process (uuid4 makes a system call per id)."""

import os
import random

_generator = random.Random()  # seeded from os.urandom
os.register_at_fork(after_in_child=_generator.seed)  # a forked child draws its own ids


def new_request_id() -> str:
    return f"{_generator.getrandbits(128):032x}"

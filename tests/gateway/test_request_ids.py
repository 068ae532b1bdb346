"""Request ids: unique, 32 hex digits, never repeated by a forked child."""

import os

from gateway.observability.request_ids import new_request_id


def test_request_ids_are_32_hex_digits_and_differ_across_forks():
    ids = {new_request_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child's next id must not repeat the parent's
        os.write(writer, new_request_id().encode())
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(reader, 64).decode() != new_request_id()

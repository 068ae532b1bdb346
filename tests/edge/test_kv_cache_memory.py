"""The edge's KV cache takes memory page by page as positions are written: a slot's first token
costs a 4 KiB page per layer for K and for V, not a 2 MiB huge page (numpy's large arrays ask
for those; 8 slots' first step then took over a second of a node's start on a 2-vCPU VM)."""

from types import SimpleNamespace

import numpy as np

from edge.kv_cache import KVCache


def _mapping_kib(address: int) -> dict[str, int]:
    """The smaps counters (kB) of the mapping that holds `address`."""
    counters, inside = {}, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(part, 16) for part in head.split("-"))
                inside = start <= address < end
            elif inside and line.split()[-1] == "kB":
                counters[head.rstrip(":")] = int(line.split()[1])
    return counters


def test_each_slots_first_token_faults_small_pages_only():
    config = SimpleNamespace(num_layers=6, num_kv_heads=3, head_dim=64)  # what the cache reads
    cache = KVCache(config, num_slots=8, max_ctx=4096)  # 6 x 8 x 1.5 MiB for K, as much for V
    assert cache.k.flags.writeable and cache.k.flags.c_contiguous
    row = np.ones((8, 3 * 64), dtype=np.float32)  # stored as float16 1.0: bits 0x3C00
    for layer in range(config.num_layers):
        cache.store(layer, np.arange(8, dtype=np.int32), np.zeros(8, dtype=np.int32), row, row)
    for array in (cache.k, cache.v):  # before anything reads the rest
        counters = _mapping_kib(array.ctypes.data)
        assert counters["AnonHugePages"] == 0 and counters.get("Shmem", 0) == 0
        assert counters["Rss"] <= 6 * 8 * 4 * 2  # one or two 4 KiB pages per slot and layer
    assert (cache.k[:, :, 0] == 0x3C00).all() and (cache.v[:, :, 0] == 0x3C00).all()
    assert not cache.k[:, :, 1:].any() and not cache.v[:, :, 1:].any()  # zeros elsewhere

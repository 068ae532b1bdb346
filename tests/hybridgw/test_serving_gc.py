import gc
import weakref

import pytest

from hybridgw.serving_gc import YOUNG_GENERATION_THRESHOLD, prepare_gc_for_serving


class _Node:
    pass


@pytest.fixture
def restored_gc():
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_startup_heap_is_frozen_and_its_garbage_collected_first(restored_gc):
    alive = [[]]  # a tracked container alive at startup
    cycle = _Node()
    cycle.itself = cycle  # garbage only a collection can free
    gone = weakref.ref(cycle)
    del cycle
    prepare_gc_for_serving()
    assert gone() is None  # collected, not frozen
    assert gc.get_freeze_count() > 0
    assert not any(tracked is alive for tracked in gc.get_objects())  # out of every generation


def test_young_generation_widened_older_thresholds_kept(restored_gc):
    gc.set_threshold(700, 11, 12)
    prepare_gc_for_serving()
    assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, 11, 12)

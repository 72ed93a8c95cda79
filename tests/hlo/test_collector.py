"""tilecc.hlo.collector: the collector is off inside the pause, a large young generation
is moved to the oldest one unscanned, and what it held is still collected."""

from __future__ import annotations

import gc
import weakref

from tilecc.hlo.collector import PROMOTE_AT, collector_paused
from tilecc.hlo.parser import parse_module


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> _Node:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return a


def test_paused_inside_and_restored_by_the_outermost_exit() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner exit leaves it off
    assert gc.isenabled()


def test_collector_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_large_pause_promotes_and_a_dropped_cycle_is_still_freed() -> None:
    gc.collect()
    with collector_paused():
        kept = [_cycle() for _ in range(PROMOTE_AT)]
        dropped = weakref.ref(_cycle())
    assert gc.get_count()[0] < PROMOTE_AT // 10  # no young scan left to run
    assert dropped() is not None  # a cycle: refcounting alone does not free it
    gc.collect()
    assert dropped() is None
    assert len(kept) == PROMOTE_AT


def test_small_pause_keeps_the_young_generation() -> None:
    gc.collect()
    with collector_paused():
        kept = [_cycle() for _ in range(100)]
    assert gc.get_count()[0] >= 100
    assert len(kept) == 100


def test_objects_frozen_by_the_caller_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            kept = [_cycle() for _ in range(PROMOTE_AT)]
        assert gc.get_freeze_count() == frozen
        assert len(kept) == PROMOTE_AT
    finally:
        gc.unfreeze()


def test_a_dropped_big_module_is_freed() -> None:
    lines = [f"  x{i} = s32[] add(x{i - 1}, x{i - 1})" for i in range(1, 8000)]
    text = "HloModule m\nENTRY e {\n  x0 = s32[] parameter(0)\n" + "\n".join(lines) + "\n}\n"
    module = parse_module(text)
    assert module.instruction_count() == 8000
    held = weakref.ref(module)  # held in cycles: its computations point back at it
    del module
    gc.collect()
    assert held() is None

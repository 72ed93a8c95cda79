"""Pausing Python's cyclic garbage collector while IR is built, and what happens after.

Contract: `collector_paused()` is a context manager. Inside it the cyclic collector is off
(nested uses are fine: only the outermost one turns it back on). On leaving the
outermost one, when the young generations hold at least `PROMOTE_AT` objects and nothing
is frozen (`gc.get_freeze_count() == 0`), every tracked object is moved to the oldest
generation without a scan (`gc.freeze()` then `gc.unfreeze()`); then the collector is on
again as it was.

Why: the parser and the passes make one Python object after another that all live as
long as the module (instructions, their operand and user lists). While the collector is
off they pile up in the youngest generation, and the first allocation after it is on
again runs a young-generation collection over all of them (~90 ms after parsing a
100k-instruction module, 10-15% of the parse; the same again after the passes), then a
middle-generation one, to find nothing: the module is alive. Moving them to the oldest
generation skips both scans. It does not leak: the oldest generation is still collected
(a dropped module's operand / user cycles are freed by the next full collection, as
they would be once promoted anyway); garbage cycles that were young when the pause
ended wait for that collection too. Small pauses (below PROMOTE_AT, a module of a few
thousand instructions) keep the collector's normal cadence: there the scan costs
milliseconds, and a process parsing small modules by the thousand (the tests, a corpus
run) frees its dropped modules young. A process that froze objects itself
(gc.freeze() before forking) keeps them frozen: the move is skipped then.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

PROMOTE_AT = 20_000
"""Young objects, as gc.get_count()[0] counts them: tracked objects allocated, less those
freed, since the last young-generation collection."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside; on leaving, a large young generation is moved to
    the oldest one unscanned (see the module contract)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] >= PROMOTE_AT and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()

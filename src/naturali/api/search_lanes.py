"""Searches run a few at a time: one per CPU the process may run on.

A search holds Python's GIL for most of its time, so as many threads as CPUs are as many as
can make progress at once; more only take the GIL from one another, and each hand-over is a
pair of thread switches, tens of µs each on a small VM: on a shared pool of 40 threads the
kernel's switching takes a large share of the server's CPU (`bench/load.py` measures it).

A search that waits longer than ``OVERFLOW_AFTER`` for a lane — every lane held by searches
that load a project's index or index a memory store's files — runs beside them instead, so
a slow search of one project never holds up every other project's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")
OVERFLOW_AFTER = 0.1  # seconds a search waits for a lane before it takes the shared pool
_LANES: RunVar[anyio.CapacityLimiter] = RunVar("naturali_search_lanes")


async def in_lane(size: int, fn: Callable[[], T]) -> T:
    """``fn()`` on a search lane, or beside the lanes once ``OVERFLOW_AFTER`` has passed
    without one coming free. ``size``: how many lanes the event loop has, fixed by its first
    search. Either way ``fn`` runs on the shared pool's threads, as every route's work does:
    a lane only counts the searches."""
    lanes = _lanes(size)
    acquired = False
    with anyio.move_on_after(OVERFLOW_AFTER):
        await lanes.acquire()
        acquired = True
    try:
        return await anyio.to_thread.run_sync(fn)
    finally:
        if acquired:
            lanes.release()


def _lanes(size: int) -> anyio.CapacityLimiter:
    """This event loop's lanes (a limiter belongs to one loop; tests start several)."""
    try:
        return _LANES.get()
    except LookupError:
        lanes = anyio.CapacityLimiter(size)
        _LANES.set(lanes)
        return lanes

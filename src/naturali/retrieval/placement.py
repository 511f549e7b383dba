"""Keeping a search's parallel scan on different cores.

A search of a large project scans its int8 codes on the caller's thread and on the scan
pool's threads at once. Measured on a 2-vCPU VM (Firecracker), the scheduler often ran the
pool's thread on the caller's own vCPU in a server process: its half of a 108k-row scan took
4.1 ms against the caller's 3.0, so the scan took 4.3–4.9 ms against 3.0 in the bench's own
process. So each pool thread keeps a CPU of its own (the process's second, third and so on),
and a caller is held on the first while it scans beside them.

Tried first and not kept: leaving the caller where it ran and moving the pool thread off its
CPU at each scan. The pool thread then moved whenever callers did, and in-process searches
slowed by ~1 ms.

Linux only; elsewhere, or with one CPU to run on, nothing is placed.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The CPUs this process may run on (a container's or taskset's share, not every CPU).
_CPUS: list[int] = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_setaffinity") else []
_PLACED = len(_CPUS) > 1
_turns = itertools.count()
_turns_lock = threading.Lock()


def cpu_count() -> int:
    """The CPUs this process may run on: its affinity's where known (a container's cpuset may
    hold 2 of a host's 64), else the machine's."""
    return len(_CPUS) if _CPUS else os.cpu_count() or 1


def own_cpu() -> None:
    """A pool thread's initializer: pin it to a CPU of its own, the process's second, third
    and so on in turn (the first is the callers', while they scan)."""
    if not _PLACED:
        return
    with _turns_lock:
        turn = next(_turns)
    os.sched_setaffinity(0, {_CPUS[1 + turn % (len(_CPUS) - 1)]})


@contextmanager
def held() -> Iterator[None]:
    """Hold the calling thread on the process's first CPU for the block, beside the pool
    threads on the others; then give it back the CPUs it had."""
    if not _PLACED:
        yield
        return
    had = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {_CPUS[0]})
    try:
        yield
    finally:
        os.sched_setaffinity(0, had)

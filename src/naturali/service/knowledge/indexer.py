"""Indexing a write for the project search, off the writer's request and off every search.

A write through naturali hands the records it wrote to be indexed and answers at once; one
worker thread per process embeds them, one store at a time, from what was written (the latest
revision of each record wins). A store is indexed once its
writes pause for ``QUIET`` seconds (at most ``LATEST`` after the first unindexed write), so a
burst of writes is embedded once, after the burst, not while it competes for the CPU. A
search still reconciles what it finds unindexed, within its budget, so nothing waits on this
thread and nothing is lost if the process stops first: the files are the truth.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Iterable

from naturali.ports.state import PlannedWrite

log = logging.getLogger("naturali.indexer")
Key = tuple[str, str]  # (project_id, store_id)
QUIET = 0.3
LATEST = 5.0


class BackgroundIndexer:
    def __init__(self, index: Callable[[str, str, Iterable[PlannedWrite]], None]) -> None:
        self._index = index
        self._pending: dict[Key, tuple[float, float]] = {}  # key → (first asked, last asked)
        self._handed: dict[Key, dict[str, PlannedWrite]] = {}  # key → record id → latest write
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._busy = False

    def schedule(self, project_id: str, store_id: str, writes: Iterable[PlannedWrite]) -> None:
        """Index these writes of the store soon, off the caller's thread."""
        with self._wake:
            if self._closed:
                return
            key = (project_id, store_id)
            now = time.monotonic()
            first, _ = self._pending.get(key, (now, now))
            self._pending[key] = (first, now)
            self._handed.setdefault(key, {}).update((w.record_id, w) for w in writes)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="naturali-indexer", daemon=True
                )
                self._thread.start()
                # A daemon never holds the process open, but it is stopped before the
                # interpreter finalizes: a thread inside onnxruntime then aborts the process
                # ("terminate called without an active exception"), as a writer exiting
                # mid-index did in tests/test_write_safety.py.
                atexit.register(self.close)
            self._wake.notify_all()  # the worker, whoever else waits on the condition

    def idle(self, timeout: float) -> bool:
        """Wait until nothing is pending (for tests and orderly shutdown)."""
        with self._wake:
            return self._wake.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _due(self) -> tuple[Key | None, float]:
        """The first store whose writes paused (or waited long enough), else the time until
        the next one is due."""
        now = time.monotonic()
        wait = LATEST
        for key, (first, last) in self._pending.items():
            due = min(last + QUIET, first + LATEST)
            if due <= now:
                return key, 0.0
            wait = min(wait, due - now)
        return None, wait

    def _work(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._pending or self._closed)
                if self._closed:
                    return
                key, wait = self._due()
                if key is None:
                    self._wake.wait(wait)
                    continue
                del self._pending[key]
                writes = self._handed.pop(key, {}).values()
                self._busy = True
            try:
                self._index(*key, writes)
            except Exception:  # the write stands; the next search indexes it
                log.exception("indexing memory store %s failed", key[1])
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def close(self) -> None:
        """Stop the worker after what it is indexing now; what is pending is left to the next
        search (the files are the truth)."""
        atexit.unregister(self.close)
        with self._wake:
            self._closed = True
            self._pending.clear()
            self._handed.clear()
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)

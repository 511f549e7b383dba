"""What the index registry leaves for later, so that a search or a write does not wait for
it: snapshots to save, small projects' snapshots to prepare, store-side vector indexes to
build. One job of a kind a project is queued at a time, in order (one running does not
stop the next being queued); ``step`` runs the next. The
composition root runs the steps on a background thread of its own (``service/container.py``)
and wakes it as jobs are queued; without one (a command on the data dir), a job runs as it is
queued."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("naturali.index")

Key = tuple[str, str]  # (kind, project)


class IndexJobs:
    def __init__(self) -> None:
        self.wake: Callable[[], None] | None = None  # set by whoever runs the steps
        self._queued: dict[Key, Callable[[], None]] = {}
        self._running: Key | None = None
        self._changed = threading.Condition()
        self._one_at_a_time = threading.RLock()  # a job may queue another (inline: runs it)

    def add(self, kind: str, project_id: str, job: Callable[[], None]) -> None:
        """Queue ``job`` unless one of its kind for the project is queued. One that is running
        may have read the project before the change that queues this one, so it does not
        count: the job runs again after it."""
        key = (kind, project_id)
        with self._changed:
            if key in self._queued:
                return
            self._queued[key] = job
        if self.wake is not None:
            self.wake()
        else:
            self.step()

    def pending(self, kind: str, project_id: str) -> bool:
        with self._changed:
            return (kind, project_id) in self._queued or self._running == (kind, project_id)

    def step(self) -> bool:
        """Run the next job; False when there was none."""
        with self._one_at_a_time:
            with self._changed:
                if not self._queued:
                    return False
                key = next(iter(self._queued))
                job = self._queued.pop(key)
                self._running = key
            try:
                job()
            except Exception:  # the write or search stands; the next search does it again
                log.exception("index job %s of %s failed", *key)
            finally:
                with self._changed:
                    self._running = None
                    self._changed.notify_all()
        return True

    def drain(self) -> None:
        """Run every queued job here, now (closing, or forgetting every index)."""
        while self.step():
            pass

    def idle(self, timeout: float) -> bool:
        """Wait until no job is queued or running; False if ``timeout`` passed first."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._queued and self._running is None, timeout
            )

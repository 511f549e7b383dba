"""A server's background thread (ingestion, sources): it calls its step while the step finds
work, sleeps otherwise until woken (work was queued here) or a poll's time passes (work
another server queued), and ends after the step in progress when closed."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("naturali.background")


class Background:
    def __init__(
        self,
        name: str,
        step: Callable[[], bool],
        poll_seconds: float,
        stopped: Callable[[], None] = lambda: None,
    ) -> None:
        self._name = name
        self._step = step  # True while it finds work
        self._poll = poll_seconds
        self._stopped = stopped  # run by the thread as it ends
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._woken = False
        self.closed = False

    def start(self) -> None:
        with self._wake:
            if self._thread is None and not self.closed:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()

    def wake(self) -> None:
        """Work was queued: take it now rather than at the next poll."""
        self.start()
        with self._wake:
            self._woken = True
            self._wake.notify_all()

    def stop(self) -> None:
        """Ask the thread to end after its step in progress, without waiting for it."""
        with self._wake:
            self.closed = True
            self._wake.notify_all()

    def close(self, timeout: float = 60.0) -> None:
        """Stop, and wait up to ``timeout`` seconds for the step in progress to end."""
        self.stop()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=timeout)

    def _work(self) -> None:
        while not self.closed:
            try:
                if self._step():
                    continue
            except Exception:  # the catalog unreachable for a moment: try again later
                log.exception("%s: a step failed", self._name)
            with self._wake:
                if not self._woken and not self.closed:
                    self._wake.wait(self._poll)
                self._woken = False
        self._stopped()

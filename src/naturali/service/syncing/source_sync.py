"""Sources' syncs, run by whichever server's SourceWorker holds one on a lease: a Git
repository's (service/syncing/git_sync.py) or a web site's (service/syncing/web_sync.py),
recorded as the source's ``last_run`` with, for a scheduled source, when it is due next.

A server runs syncs on a bounded pool of threads, and the catalogue hands out one sync of a
project at a time (storage/sources.py), so a slow or endless source delays only its own
project. Each run has a deadline and a page budget (Fetching): one cut short by either says
so (``truncated``) and its next run — scheduled or asked for — goes on from where it stopped.
Its lease is renewed by the
worker's heartbeat while it works, and a run whose lease another server took stops at its
next file or page."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from naturali.ids import new_id
from naturali.model import Source
from naturali.ports.storage import Storage
from naturali.service.corpus.documents import Documents
from naturali.service.platform.background import Background
from naturali.service.syncing.git_sync import sync_git
from naturali.service.syncing.source_runs import Fetching, LeaseLost, Run
from naturali.service.syncing.web_sync import sync_web

log = logging.getLogger("naturali.sources")
POLL_SECONDS = 15.0  # how often an idle worker looks for a due sync
BEAT_SECONDS = 10.0  # how often the leases of the syncs running here are renewed
CLOSE_SECONDS = 5.0  # how long a closing server waits for its running syncs
KINDS: dict[str, Callable[[Source, Documents, Storage, Fetching, Run], None]] = {
    "git": sync_git,
    "web": sync_web,
}


class SourceWorker:
    """``workers`` threads a server, each taking a due sync on a lease, running and recording
    it; one more renews the leases of the syncs running."""

    def __init__(
        self,
        storage: Storage,
        documents: Callable[[], Documents],
        fetching: Fetching,
        lease_seconds: float = 120.0,
        workers: int = 4,
    ) -> None:
        self._storage = storage
        self._documents = documents
        self._fetching = fetching
        self._lease = lease_seconds
        self.owner = new_id("worker")
        self._running: dict[str, threading.Event] = {}  # source id → set once its lease is lost
        self._lock = threading.Lock()
        self._loops = [
            Background(f"naturali-sources-{n}", self.run_once, POLL_SECONDS) for n in range(workers)
        ]
        self._heart = Background("naturali-sources-lease", self._renew, BEAT_SECONDS)

    def start(self) -> None:
        """Start taking due syncs (the server does at start: a schedule needs no caller)."""
        self._heart.start()
        for loop in self._loops:
            loop.start()

    def wake(self) -> None:
        """A sync was asked for: take it now rather than at the next poll."""
        self._heart.start()
        for loop in self._loops:
            loop.wake()

    def close(self) -> None:
        """Stop taking syncs; a running one stops at its next file or page (waited for a few
        seconds: one in the middle of a slow page is left to its lease, which another server,
        or this one restarted, takes over when it runs out)."""
        for loop in (*self._loops, self._heart):
            loop.stop()
        with self._lock:
            for lost in self._running.values():
                lost.set()
        deadline = time.monotonic() + CLOSE_SECONDS
        for loop in (*self._loops, self._heart):
            loop.close(timeout=max(0.0, deadline - time.monotonic()))

    def run_once(self) -> bool:
        """Take one due sync and run it; False when none is due (tests call it)."""
        started = time.time()
        source = self._storage.claim_source(self.owner, self._lease, started)
        if source is None:
            return False
        lost = threading.Event()
        with self._lock:
            self._running[source.id] = lost
        try:
            self._run(source, started, lost)
        finally:
            with self._lock:
                self._running.pop(source.id, None)
        return True

    def _run(self, source: Source, started: float, lost: threading.Event) -> None:
        run = Run(
            deadline=time.monotonic() + self._fetching.run_seconds,
            holding=lambda: not lost.is_set(),
        )
        try:
            KINDS[source.kind](source, self._documents(), self._storage, self._fetching, run)
        except LeaseLost:
            log.warning("source %s: another server took its sync over", source.id)
            return
        except Exception:  # a bug, or the catalog gone: said in the run, never silent
            log.exception("source %s: its sync failed", source.id)
            run.error = "the sync failed on the server (its log has the details)"
        if run.error:
            log.warning("source %s did not sync: %s", source.id, run.error)
        every = source.every_seconds
        next_run = time.time() + every if every else None
        record = run.record().model_dump()
        cursor = run.cursor or source.cursor  # a failed run leaves where the last one ended
        self._storage.finish_source(source.id, self.owner, record, cursor, next_run, started)

    def _renew(self) -> bool:
        """Renew the lease of every sync running here; one another server took is marked
        lost, and stops at its next file or page."""
        with self._lock:
            running = list(self._running.items())
        for source_id, lost in running:
            if not self._storage.renew_source(source_id, self.owner, self._lease):
                lost.set()
        return False

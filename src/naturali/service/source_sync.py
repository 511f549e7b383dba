"""Sources' syncs, run by whichever server's SourceWorker holds one on a lease: a Git
repository's (service/git_sync.py) or a web site's (service/web_sync.py), recorded as the
source's ``last_run`` with, for a scheduled source, when it is due next."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from naturali.ids import new_id
from naturali.model import Source
from naturali.ports.storage import Storage
from naturali.service.background import Background
from naturali.service.documents import Documents
from naturali.service.git_sync import sync_git
from naturali.service.source_runs import Fetching, LeaseLost, Run
from naturali.service.web_sync import sync_web

log = logging.getLogger("naturali.sources")
POLL_SECONDS = 15.0  # how often an idle worker looks for a due sync
KINDS: dict[str, Callable[[Source, Documents, Storage, Fetching, Run], None]] = {
    "git": sync_git,
    "web": sync_web,
}


class SourceWorker:
    """One thread a server: takes a due sync on a lease, runs it, records it."""

    def __init__(
        self,
        storage: Storage,
        documents: Callable[[], Documents],
        fetching: Fetching,
        lease_seconds: float = 120.0,
    ) -> None:
        self._storage = storage
        self._documents = documents
        self._fetching = fetching
        self._lease = lease_seconds
        self.owner = new_id("worker")
        self._background = Background("naturali-sources", self.run_once, POLL_SECONDS)

    def start(self) -> None:
        """Start taking due syncs (the server does at start: a schedule needs no caller)."""
        self._background.start()

    def wake(self) -> None:
        """A sync was asked for: take it now rather than at the next poll."""
        self._background.wake()

    def close(self) -> None:
        self._background.close()

    def run_once(self) -> bool:
        """Take one due sync and run it; False when none is due (tests call it)."""
        started = time.time()
        source = self._storage.claim_source(self.owner, self._lease, started)
        if source is None:
            return False
        run = Run(heartbeat=lambda: self._storage.renew_source(source.id, self.owner, self._lease))
        try:
            KINDS[source.kind](source, self._documents(), self._storage, self._fetching, run)
        except LeaseLost:
            log.warning("source %s: another server took its sync over", source.id)
            return True
        except Exception as exc:  # a bug, or the catalog gone: said in the run, never silent
            log.exception("source %s: its sync failed", source.id)
            run.error = f"the sync failed: {exc}"[:300]
        if run.error:
            log.warning("source %s did not sync: %s", source.id, run.error)
        every = source.every_seconds
        next_run = time.time() + every if every else None
        record = run.record().model_dump()
        cursor = run.cursor or source.cursor  # a failed run leaves where the last one ended
        self._storage.finish_source(source.id, self.owner, record, cursor, next_run, started)
        return True

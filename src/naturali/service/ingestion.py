"""Embedding uploaded versions in the background, from durable jobs in the catalog.

An upload is validated, parsed and cut into chunks in its request (so a bad file is refused
there, with nothing stored); a version of more than a few chunks is then queued as a job and
answered ``202 processing``. One worker thread per server takes jobs from the catalog — any
server's, on PostgreSQL — and embeds them in batches at the embedder's normal priority, so a
search's query, embedded as urgent, goes first. The version is written with all its chunks in
the transaction that ends the job: search sees it whole or not at all, and the version before
until then. A server holds a job on a lease renewed at every batch; if it dies (``kill -9``)
the lease runs out and a server takes the job again from its first chunk, and since only the
lease's holder can complete it, no chunk is ever written twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from naturali.ids import new_id
from naturali.model import IngestJob
from naturali.ports.embedder import Embedder
from naturali.ports.storage import EmbeddedChunk, Storage, VersionConflict

log = logging.getLogger("naturali.ingestion")
BATCH = 32  # chunks a batch: ~0.7 s of embedding on 2 cores, the lease's heartbeat
POLL_SECONDS = 2.0  # how often an idle worker looks for jobs another server queued


class IngestionWorker:
    def __init__(
        self, storage: Storage, embedder: Callable[[], Embedder], lease_seconds: float = 15.0
    ) -> None:
        self._storage = storage
        self._embedder = embedder
        self._lease = lease_seconds
        self.owner = new_id("worker")
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._woken = False
        self.chunks_embedded = 0  # by this worker, since start (for metrics)

    def start(self) -> None:
        """Start taking jobs (the server does at start, so jobs left by a stopped one resume)."""
        with self._wake:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._work, name="naturali-ingestion", daemon=True
                )
                self._thread.start()

    def wake(self) -> None:
        """A job was queued: take it now rather than at the next poll."""
        self.start()
        with self._wake:
            self._woken = True
            self._wake.notify_all()

    def run_once(self) -> bool:
        """Take and run one job, if there is one (the worker's step; tests call it)."""
        job = self._storage.claim_ingest(self.owner, self._lease)
        if job is None:
            return False
        self._run(job)
        return True

    def close(self) -> None:
        """Stop after the current batch; an unfinished job is taken again once its lease
        runs out, here or on another server."""
        with self._wake:
            self._closed = True
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)

    def _work(self) -> None:
        while not self._closed:
            try:
                if self.run_once():
                    continue
            except Exception:  # the catalog unreachable for a moment: try again later
                log.exception("taking an ingestion job failed")
            with self._wake:
                if not self._woken and not self._closed:
                    self._wake.wait(POLL_SECONDS)
                self._woken = False

    def _run(self, job: IngestJob) -> None:
        try:
            chunks = self._embedded(job)
            if chunks is None:
                return  # replaced by a newer upload or deleted: nothing to write
            embedder = self._embedder()
            document = replace(job.document, chunk_count=len(chunks))
            self._storage.finish_ingest(job.id, self.owner, document, chunks, embedder.model_id)
        except VersionConflict:
            self._fail(
                job, "version_conflict", "the document changed while this version was ingested"
            )
        except Exception as exc:
            log.exception("ingesting %s failed", job.document.path)
            self._fail(job, "ingest_failed", f"the version could not be embedded: {exc}")

    def _embedded(self, job: IngestJob) -> list[EmbeddedChunk] | None:
        embedder = self._embedder()
        chunks: list[EmbeddedChunk] = []
        for start in range(0, len(job.drafts), BATCH):
            drafts = job.drafts[start : start + BATCH]
            vectors = embedder.embed([d.text for d in drafts])
            chunks += [
                EmbeddedChunk(d, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                for d, v in zip(drafts, vectors, strict=True)
            ]
            self.chunks_embedded += len(drafts)
            if self._closed:
                # Stopping: the job is handed back (its lease ends now), so another server,
                # or this one restarted, takes it at once rather than after the lease.
                self._storage.renew_ingest(job.id, self.owner, 0, 0.0)
                return None
            if not self._storage.renew_ingest(job.id, self.owner, len(chunks), self._lease):
                return None
        return chunks

    def _fail(self, job: IngestJob, code: str, message: str) -> None:
        error = {"type": "api_error", "code": code, "message": message, "param": None}
        self._storage.fail_ingest(job.id, self.owner, error)

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

A version with pages that have no text layer (a scanned PDF, an image) first has them read by
OCR here, one page a step (in the isolated worker, each page its own CPU budget), its
progress recorded as pages; then its file is read again whole with that text, and its chunks
are embedded as any other's.

Projects share the worker fairly: it serves one job of each of up to ``MAX_PROJECTS``
projects at once and embeds a batch of each in turn, so an upload waits for at most one batch
of each other project's work, however many files another project queued before it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from naturali.errors import NaturaliError
from naturali.ids import new_id
from naturali.ingest import isolated
from naturali.model import IngestJob
from naturali.ports.embedder import Embedder
from naturali.ports.storage import EmbeddedChunk, Storage, VersionConflict
from naturali.service.corpus.ocr_budget import OcrBudget
from naturali.service.platform.background import Background
from naturali.text.context import in_context

log = logging.getLogger("naturali.ingestion")
BATCH = 32  # chunks a batch: ~0.7 s of embedding on 2 cores, the lease's heartbeat
POLL_SECONDS = 2.0  # how often an idle worker looks for jobs another server queued
MAX_PROJECTS = 8  # projects whose jobs a worker serves in turn


@dataclass
class _Held:
    """A job this worker holds, the text OCR read on its pages so far, and its chunks
    embedded so far."""

    job: IngestJob
    chunks: list[EmbeddedChunk] = field(default_factory=list)
    ocr_texts: dict[int, str | None] = field(default_factory=dict)  # None: not read (budget)


@dataclass(frozen=True)
class Scans:
    """Where the OCR step finds an upload's file (by its content hash), and the most chunks
    a version may have once its scanned pages are read."""

    files_dir: Path
    max_chunks: int
    budget: OcrBudget = field(default_factory=lambda: OcrBudget(300, 600))

    def read(self, job: IngestJob, texts: dict[int, str | None], counter: str) -> isolated.Read:
        document = job.document
        data = (self.files_dir / document.content_hash).read_bytes()
        return isolated.read(
            data, document.filename, counter, self.max_chunks, texts, document.title
        )

    def ocr_page(self, job: IngestJob, number: int) -> str:
        data = (self.files_dir / job.document.content_hash).read_bytes()
        return isolated.ocr_page(data, job.document.filename, number)


class IngestionWorker:
    def __init__(
        self,
        storage: Storage,
        embedder: Callable[[str], Embedder],  # a project's (its model's)
        lease_seconds: float = 15.0,
        scans: Scans | None = None,
    ) -> None:
        self._storage = storage
        self._scans = scans
        self._embedder = embedder
        self._lease = lease_seconds
        self.owner = new_id("worker")
        self._background = Background(
            "naturali-ingestion", self.step, POLL_SECONDS, self._hand_back
        )
        self._held: list[_Held] = []  # in turn order: the first embeds the next batch
        self.chunks_embedded = 0  # by this worker, since start (for metrics)
        # Told each project a finished job changed (the search indexes' snapshots).
        self.after_commit: Callable[[str], None] = lambda project_id: None

    def start(self) -> None:
        """Start taking jobs (the server does at start, so jobs left by a stopped one resume)."""
        self._background.start()

    def wake(self) -> None:
        """A job was queued: take it now rather than at the next poll."""
        self._background.wake()

    def run_once(self) -> bool:
        """Take jobs and embed them until this worker holds none (tests call it)."""
        if not self.step():
            return False
        while self._held:
            self.step()
        return True

    def step(self) -> bool:
        """The worker's step: take a job of a project it is not serving yet, if there is one
        and room, then embed the next batch of the job whose turn it is; False when there is
        nothing to do."""
        if len(self._held) < MAX_PROJECTS:
            serving = {h.job.document.project_id for h in self._held}
            job = self._storage.claim_ingest(self.owner, self._lease, serving)
            if job is not None:
                self._held.append(_Held(job))
        if not self._held:
            return False
        held = self._held.pop(0)
        try:
            more = self._ocr_step(held) if held.job.ocr_pages else self._batch(held)
        except NaturaliError as exc:  # the file refused once read whole (a limit it reached)
            self._fail(held.job, exc.code, str(exc))
            more = False
        except Exception as exc:
            log.exception("ingesting %s failed", held.job.document.path)
            self._fail(held.job, "ingest_failed", f"the version could not be embedded: {exc}")
            more = False
        if more:
            self._held.append(held)
        self._renew_held()
        return True

    def close(self) -> None:
        """Stop after the current batch; an unfinished job is taken again once its lease
        runs out, here or on another server."""
        self._background.close()

    def _batch(self, held: _Held) -> bool:
        """Embed the job's next batch, and write the version once it is whole; whether the
        job has batches left."""
        job = held.job
        embedder = self._embedder(job.document.project_id)
        drafts = job.drafts[len(held.chunks) : len(held.chunks) + BATCH]
        texts = [in_context(d.text, d.context) for d in drafts]
        vectors = embedder.embed(texts) if texts else np.zeros((0, embedder.dimension))
        held.chunks += [
            EmbeddedChunk(d, np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for d, v in zip(drafts, vectors, strict=True)
        ]
        self.chunks_embedded += len(drafts)
        if self._background.closed:
            self._held.insert(0, held)
            self._hand_back()
            return False
        if len(held.chunks) < len(job.drafts):
            return True  # its lease is renewed with the others' (_renew_held)
        document = replace(job.document, chunk_count=len(held.chunks))
        try:
            self._storage.finish_ingest(
                job.id, self.owner, document, held.chunks, embedder.model_id
            )
        except VersionConflict:
            self._fail(
                job, "version_conflict", "the document changed while this version was ingested"
            )
            return False
        self.after_commit(document.project_id)
        return False

    def _ocr_step(self, held: _Held) -> bool:
        """Read the job's next scanned page by OCR; after the last, read the file again
        whole with their text, and the job goes on as one to embed."""
        job = held.job
        assert self._scans is not None, "a job with pages to read by OCR needs Scans"
        number = job.ocr_pages[len(held.ocr_texts)]
        done = sum(1 for text in held.ocr_texts.values() if text is not None)
        if self._scans.budget.take(job.document.project_id, done):
            held.ocr_texts[number] = self._scans.ocr_page(job, number)
        else:  # over the document's cap or the project's hour: the rest is listed, not read
            held.ocr_texts |= {n: None for n in job.ocr_pages[len(held.ocr_texts) :]}
        if len(held.ocr_texts) < len(job.ocr_pages):
            return True
        counter = self._embedder(job.document.project_id).token_counter
        read = self._scans.read(job, held.ocr_texts, counter)
        document = replace(job.document, warnings=read.warnings, reading=read.reading)
        held.job = replace(job, document=document, drafts=read.drafts, ocr_pages=[])
        return True  # its chunks are embedded from its next turn

    def _renew_held(self) -> None:
        """Record each held job's progress and extend its lease, so that it outlives a round of
        the others' batches; a job replaced by a newer upload or deleted is dropped (nothing
        of it is written)."""
        self._held = [
            h
            for h in self._held
            if self._storage.renew_ingest(
                h.job.id,
                self.owner,
                len(h.chunks),
                self._lease,
                pages_done=len(h.ocr_texts),
                chunks_total=None if h.job.ocr_pages else len(h.job.drafts),
            )
        ]

    def _hand_back(self) -> None:
        """Stopping: held jobs are handed back (their leases end now), so another server, or
        this one restarted, takes them at once rather than after the lease."""
        for held in self._held:
            self._storage.renew_ingest(held.job.id, self.owner, 0, 0.0)
        self._held.clear()

    def _fail(self, job: IngestJob, code: str, message: str) -> None:
        error = {"type": "api_error", "code": code, "message": message, "param": None}
        self._storage.fail_ingest(job.id, self.owner, error)

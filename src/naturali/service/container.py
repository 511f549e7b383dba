"""The service container: every service of one process, wired to the ports it is given.

Every interface (HTTP, CLI on a data dir, MCP) calls these services; authorization,
validation and transactions live here, once. Which storage and which embedder fill the ports
is decided in ``naturali.compose``, the composition root.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from naturali.ports.embedder import Embedder
from naturali.ports.reranker import Reranker
from naturali.ports.state import StateFactory
from naturali.ports.storage import NewVector, Storage
from naturali.retrieval.indexes.registry import IndexRegistry
from naturali.retrieval.second_stage import SecondStage
from naturali.retrieval.vector_leg.vectors import ScanPool
from naturali.service.corpus.documents import Documents
from naturali.service.corpus.ingestion import IngestionWorker, Scans
from naturali.service.corpus.ocr_budget import OcrBudget
from naturali.service.corpus.reading import Reader
from naturali.service.knowledge.embedders import Embedders
from naturali.service.knowledge.indexer import BackgroundIndexer
from naturali.service.knowledge.model_change import ModelChanges
from naturali.service.knowledge.overview import Overview
from naturali.service.knowledge.query_vectors import QueryVectors
from naturali.service.knowledge.search import Search
from naturali.service.memory.dates import Dates
from naturali.service.memory.memories import Memories
from naturali.service.memory.mutations import Mutations
from naturali.service.memory.records import Records
from naturali.service.memory.stores import StoreRegistry
from naturali.service.memory.write_engine import WriteEngine
from naturali.service.platform.audit import AuditTrail
from naturali.service.platform.auth import Auth
from naturali.service.platform.background import Background
from naturali.service.platform.disk import DiskSpace
from naturali.service.platform.projects import Projects, Users
from naturali.service.platform.quotas import QuotaLimits, Quotas
from naturali.service.platform.tokens import Tokens
from naturali.service.syncing.source_runs import Fetching
from naturali.service.syncing.source_sync import SourceWorker
from naturali.service.syncing.sources import Sources
from naturali.settings import Settings
from naturali.sources import addresses
from naturali.text.context import in_context
from naturali.vault.files import remove_temp_files

log = logging.getLogger(__name__)
TEMP_FILE_SECONDS = 300.0

OWNER_TOKEN_FILE = "owner-token"


@dataclass(frozen=True)
class Concurrency:
    """The threads searches run on, built from the settings by the composition root
    (compose.py) and stopped by ``Services.close``: ``lanes`` searches at once over HTTP
    (api/search_lanes.py), the pool their queries are embedded on meanwhile, and the pool a
    large index's vector scan is shared over."""

    lanes: int
    queries: ThreadPoolExecutor
    scan: ScanPool

    def shutdown(self) -> None:
        self.queries.shutdown(wait=False, cancel_futures=True)
        self.scan.executor.shutdown(wait=False, cancel_futures=True)


class Services:
    """The services of one data dir; each embedding model loaded on first use (``embedders``)."""

    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        state: tuple[StateFactory, StateFactory],
        embedders: Embedders,
        concurrency: Concurrency,
        load_reranker: Callable[[], Reranker],
    ) -> None:
        self.settings = settings
        self.concurrency = concurrency
        data_dir = settings.data_dir
        self.storage = storage
        self.embedders = embedders
        self._load_reranker = load_reranker
        self._reranker: Reranker | None = None
        self._reranker_lock = threading.Lock()
        self.disk = DiskSpace(data_dir, settings.min_free_bytes)
        self.auth = Auth(self.storage, self.disk.check)
        self.indexes_restored = threading.Event()  # set by restore_indexes (naturali serve)
        self.users = Users(self.storage)
        self.tokens = Tokens(self.storage, self.auth)
        self.audit = AuditTrail(self.storage, self.auth)
        self.projects = Projects(self.storage, self.auth)
        limits = (settings.quota_bytes, settings.quota_documents, settings.quota_chunks)
        self.quotas = Quotas(self.storage, QuotaLimits(*limits, settings.quota_memories))
        self.ingestion, self.documents = self._documents(settings)
        self.source_worker, self.sources = self._sources(settings)
        self.stores = StoreRegistry(
            data_dir / "stores", *state, settings.vault_max_files, settings.open_stores
        )
        self.mutations = Mutations(
            self.storage,
            self.auth,
            self.stores,
            WriteEngine(settings.git_binary, settings.vault_git),
        )
        self.memories = Memories(
            self.storage, self.auth, self.embedders.of, self.stores, self.mutations, self.quotas
        )
        self.indexer = BackgroundIndexer(self.memories.index_written)
        self.mutations.after_write = self.indexer.schedule
        reader = Reader(self.storage, self.auth, self.stores)
        self.records = Records(reader)
        self.dates = Dates(reader)
        self.search = self._search(settings, concurrency)
        written = self.indexes.written
        self.documents.after_commit = self.ingestion.after_commit = written
        self.memories.after_index = written
        self.overview = Overview(self.storage, self.auth, self.indexes, self.embedders.of)
        self.model_changes = ModelChanges(self.storage, self.embedders)
        self.model_work = Background("naturali-models", self.model_changes.step, 30.0)
        self.model_changes.wake = self.model_work.wake

    def _documents(self, settings: Settings) -> tuple[IngestionWorker, Documents]:
        """Uploads, and the worker that reads their scanned pages and embeds them."""
        files = settings.data_dir / "files"
        ingestion = IngestionWorker(
            self.storage,
            self.embedders.of,
            settings.ingest_lease_seconds,
            Scans(
                files,
                settings.max_chunks_per_document,
                OcrBudget(settings.ocr_document_pages, settings.ocr_project_pages_per_hour),
            ),
        )
        documents = Documents(
            self.storage,
            self.auth,
            self.embedders.of,
            files,
            settings.max_upload_bytes,
            settings.max_chunks_per_document,
            settings.ingest_queue_chunks,
            ingestion.wake,
            self.quotas,
        )
        return ingestion, documents

    def _sources(self, settings: Settings) -> tuple[SourceWorker, Sources]:
        """Sources, and the worker that syncs them when due (one a server, on a lease)."""
        allow = addresses.Allowlist.parse(
            settings.sources_allow,
            settings.sources_local_roots,
            (settings.data_dir, settings.local_cache_dir),
        )
        key = settings.sources_ssh_key
        fetching = Fetching(
            settings.local_cache_dir / "sources",
            allow,
            settings.max_upload_bytes,
            settings.git_binary,
            _ssh_command(key, settings.local_cache_dir / "sources" / "known_hosts")
            if key
            else None,
            settings.sources_page_seconds,
            settings.sources_run_seconds,
            settings.sources_run_pages,
        )
        worker = SourceWorker(
            self.storage, lambda: self.documents, fetching, workers=settings.sources_workers
        )
        return worker, Sources(self.storage, self.auth, allow, worker.wake)

    def _search(self, settings: Settings, concurrency: Concurrency) -> Search:
        self.indexes = IndexRegistry(
            self.storage,
            lambda project_id: self.embedders.of(project_id).dimension,
            lambda project_id: self.embedders.of(project_id).model_id,
            settings.index_memory_bytes,
            settings.local_cache_dir / "indexes",
            settings.index_snapshot_rows,
            settings.database_vector_rows,
        )
        # The index registry's saves, preparations and builds, on a thread of their own.
        self.index_work = Background("naturali-index", self.indexes.jobs.step, 60.0)
        self.indexes.jobs.wake = self.index_work.wake
        return Search(
            self.storage,
            self.auth,
            QueryVectors(self.embedders.of, settings.query_vector_cache_entries),
            self.indexes,
            self.memories,
            lambda project_id: self.embedders.of(project_id).vector_weight,
            settings.reconcile_budget_seconds,
            concurrency.queries,
            concurrency.scan,
            SecondStage(self.reranker, settings.rerank_depth),
        )

    def reranker(self) -> Reranker:
        """Loaded on first use, once per process (a server never asked to rerank never
        reads the model)."""
        with self._reranker_lock:
            if self._reranker is None:
                self._reranker = self._load_reranker()
            return self._reranker

    @property
    def embedder_loaded(self) -> bool:
        return self.embedders.loaded

    def embedder(self) -> Embedder:
        """The server's embedder, loaded on first use, once per process."""
        return self.embedders.default()

    def reembed(self, progress: Callable[[int], None] | None = None, batch: int = 256) -> int:
        """Re-embed every chunk whose vector another model made (the configured embedder
        changed); returns how many. Chunk ids and text stay; only vectors change."""
        embedder = self.embedder()
        done = 0
        while chunks := self.storage.stale_chunks(embedder.model_id, batch):
            vectors = embedder.embed([in_context(c.text, c.context) for c in chunks])
            self.storage.set_vectors(
                [
                    NewVector(c.project_id, c.seq, v.astype("float32").tobytes())
                    for c, v in zip(chunks, vectors, strict=True)
                ],
                embedder.model_id,
            )
            done += len(chunks)
            if progress:
                progress(done)
        if done:
            self.indexes.reset()
        return done

    def bootstrap(self) -> str | None:
        """On first start, create the owner user and token; return the token that time only.

        ``NATURALI_BOOTSTRAP_TOKEN`` (settings.bootstrap_token) is used instead of a random one.
        The token is also written to ``<data_dir>/owner-token`` with mode 0600.
        """
        if self.users.count() > 0:
            return None
        _, token = self.users.create("owner", self.settings.bootstrap_token)
        path: Path = self.settings.data_dir / OWNER_TOKEN_FILE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(token + "\n")
        os.chmod(path, 0o600)
        return token

    def readiness(self) -> list[str]:
        """What keeps this server from answering a search now (nothing: ready): the embedding
        model not loaded, the saved indexes still loading, the catalog unreachable."""
        waiting = []
        if not self.embedder_loaded:
            waiting.append("the embedding model is loading")
        if not self.indexes_restored.is_set():
            waiting.append("the saved search indexes are loading")
        try:
            self.storage.count_users()
        except Exception as exc:  # any failure of the database is a reason not to be ready
            waiting.append(f"the catalog is unreachable: {exc}")
        if self.disk.low():
            waiting.append(f"the disk is nearly full ({self.disk.free() // 1024} KiB free)")
        return waiting

    def restore_indexes(self) -> list[str]:
        """Load the search indexes the last run saved (``IndexRegistry.restore``), so that a
        restarted server's first searches do not wait for them; returns their projects."""
        try:
            return self._restore_indexes()
        finally:
            self.indexes_restored.set()

    def _restore_indexes(self) -> list[str]:
        self._remove_interrupted_temp_files()
        started = time.monotonic()
        try:
            restored = self.indexes.restore(lambda p: self.storage.get_project(p) is not None)
        except Exception:  # each index is then loaded by its first search, as before
            log.exception("could not restore the saved search indexes")
            return []
        if restored:
            took = time.monotonic() - started
            log.info("restored the search indexes of %d project(s) in %.1f s", len(restored), took)
        return restored

    def _remove_interrupted_temp_files(self) -> None:
        """At start: temp files of writes a kill interrupted (five minutes old: no live write's,
        even another server's on a shared data dir)."""
        stores = self.settings.data_dir / "stores"
        for vault in stores.glob("*/vault") if stores.is_dir() else ():
            for path in remove_temp_files(vault, older_than=TEMP_FILE_SECONDS):
                log.info("removed %s, left by an interrupted write", path)

    def close(self) -> None:
        """Stop the background indexer and the search threads, then close every store and
        the catalog."""
        self.indexer.close()
        self.ingestion.close()
        self.source_worker.close()
        self.concurrency.shutdown()
        self.model_work.close()
        self.index_work.close()  # the job in progress ends; close does the rest here
        self.indexes.close()
        self.stores.close()
        self.storage.close()


def _ssh_command(key: Path, known_hosts: Path) -> str:
    """ssh with the operator's deploy key only, never a prompt; a host's key is learnt on its
    first fetch and held to after."""
    return (
        f"ssh -i {shlex.quote(str(key))} -o IdentitiesOnly=yes -o BatchMode=yes "
        f"-o StrictHostKeyChecking=accept-new -o UserKnownHostsFile={shlex.quote(str(known_hosts))}"
    )

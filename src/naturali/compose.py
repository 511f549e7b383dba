"""The composition root: which storage, which state store and which embedder fill the
service's ports, and the threads searches run on. Every entrypoint (``naturali serve``, the
CLI on a data dir, ``naturali mcp``, the benchmarks) builds its services here and nowhere
else; nothing starts a thread at import."""

from __future__ import annotations

import ctypes
import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from naturali.embed.factory import build_embedder, build_named, build_reranker, default_name
from naturali.ports.embedder import Embedder
from naturali.ports.state import StateFactory
from naturali.ports.storage import Storage
from naturali.retrieval.vector_leg.vectors import ScanPool
from naturali.service.container import Concurrency, Services
from naturali.service.knowledge.embedders import Embedders
from naturali.settings import Settings
from naturali.storage.sqlite.catalog import SqliteStorage
from naturali.storage.sqlite.state import SqliteState


def build_services(settings: Settings, *, embedder: Embedder | None = None) -> Services:
    """The services of ``settings.data_dir``: the SQLite catalog and state, or PostgreSQL
    when ``database_url`` is set; the configured embedder loaded on first use. Tests and
    benchmarks may pass a shared ``embedder``."""
    _own_data_dir(settings.data_dir)
    storage, state = _stores(settings)
    return Services(
        settings,
        storage,
        (state, SqliteState),  # the store's state; a scratch one for projections (asOf)
        Embedders(
            storage,
            (lambda: embedder) if embedder is not None else (lambda: build_embedder(settings)),
            lambda name: build_named(settings, name),
            default_name(settings),
        ),
        concurrency(settings),
        lambda: build_reranker(settings, _rerank_pool(settings)),
    )


def _rerank_pool(settings: Settings) -> ThreadPoolExecutor:
    """The second stage's workers, made with the reranker on its first use: one pair each."""
    return ThreadPoolExecutor(settings.embedder_threads, thread_name_prefix="naturali-rerank")


# How long a thread may hold the GIL while another waits for it. A request's thread keeps
# returning from work done without the GIL (onnxruntime, numpy, SQLite) and must then wait
# for it behind whichever thread runs Python — up to Python's default of 5 ms each time.
# At 1 ms: 6-17% more searches/s with 8 clients in each of four back-to-back pairs here
# (bench/load.py), at the same server CPU over the run.
GIL_SWITCH_INTERVAL = 0.001
# The garbage collector's generations, collected far less often than Python's 700 / 10 / 10:
# a server holding many projects' indexes, owners and records has a large old generation, and
# a full collection stops every request (120–250 ms with 1,000 projects loaded), as often as
# loading projects adds a quarter of it. With 8 clients uniform over 1,000 projects, the p99
# 143–185 → 123–135 ms, after a restart 216–250 → 128–158 ms (bench/tenants.py, interleaved
# runs); most garbage is freed by reference counting anyway.
GC_THRESHOLDS = (50_000, 50, 50)
# Scanning shares: a woken thread takes ~0.3 ms here, a cold scan of 16k rows ~0.4, so more
# than four threads gain nothing on the index sizes a process holds
# (retrieval/vector_leg/vectors.py).
MAX_SCAN_THREADS = 4


def available_cpus() -> int:
    """The CPUs this process may run on (a container's or taskset's share, not the host's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def concurrency(settings: Settings) -> Concurrency:
    """A search holds the GIL for most of its time: as many lanes as CPUs make progress at
    once (``search_threads``, 0: one per CPU); each lane's search embeds one query at a time."""
    cpus = available_cpus()
    lanes = settings.search_threads or cpus
    scan_threads = max(1, min(MAX_SCAN_THREADS, cpus))
    return Concurrency(
        lanes=lanes,
        queries=ThreadPoolExecutor(lanes, thread_name_prefix="naturali-query"),
        scan=ScanPool(
            ThreadPoolExecutor(max(1, scan_threads - 1), thread_name_prefix="naturali-scan"),
            scan_threads,
        ),
    )


def own_process() -> None:
    """What a server that owns its process sets for it (``naturali serve``)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)
    gc.set_threshold(*GC_THRESHOLDS)
    trim = _malloc_trim()
    started = any(t.name == "naturali-trim" for t in threading.enumerate())
    if trim is not None and not started:
        threading.Thread(target=_trimming, args=(trim,), name="naturali-trim", daemon=True).start()


# How often the C heap's free pages go back to the system. Dropped indexes free their arrays
# in every thread's malloc arena, in pieces no arena can give back alone: under a uniform
# search of 10,000 projects (~30 indexes dropped a second) RSS grew ~1 GB past what the
# loaded indexes held in four minutes. A trim of a ~3 GB heap takes a few ms, off the GIL.
TRIM_SECONDS = 5.0


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``; None where the C library has none (musl, macOS)."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def _trimming(trim: Callable[[int], int]) -> None:
    while True:
        time.sleep(TRIM_SECONDS)
        trim(0)


def _stores(settings: Settings) -> tuple[Storage, StateFactory]:
    if settings.database_url is None:
        return SqliteStorage(settings.data_dir / "catalog.sqlite"), SqliteState
    # Imported here: psycopg and pgvector are the optional ``postgres`` extra (a documented
    # lazy import; the default install does not have them).
    from naturali.storage.postgres.catalog import PostgresStorage
    from naturali.storage.postgres.state import state_factory

    catalog = PostgresStorage(settings.database_url)
    return catalog, state_factory(catalog.db, settings.local_cache_dir)


def migrate_database(settings: Settings) -> None:
    """Run the configured store's schema migrations alone (opening a store runs them)."""
    _own_data_dir(settings.data_dir)
    storage, _ = _stores(settings)
    storage.close()


def _own_data_dir(data_dir: Path) -> None:
    """Everything under the data dir is the owner's alone: indexed text, tokens' hashes, vault
    records. The umask covers what SQLite, Git and the writers create later."""
    os.umask(0o077)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(data_dir, 0o700)


def backup_data_dir(settings: Settings, dest: Path, say: Callable[[str], None]) -> None:
    """A consistent copy of a running embedded data dir (storage/sqlite/backup.py)."""
    from naturali.storage.sqlite import backup  # lazy import: only the command needs it

    backup.backup(settings, dest, say)


def restore_data_dir(backup_dir: Path, data_dir: Path) -> None:
    """A backup brought into an empty data dir."""
    from naturali.storage.sqlite import backup  # lazy import: only the command needs it

    backup.restore(backup_dir, data_dir)

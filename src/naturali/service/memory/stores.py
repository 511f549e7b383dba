"""Per memory store resources: the vault scanner, the store's ``state.sqlite``, the ontology,
and the eligible-record view cached per (scan, guards). A server keeps the most recently used
``open_stores`` of them while unused (their scans and inotify watches), so ten thousand stores
searched in turn do not hold ten thousand open; an unused store keeps one database connection,
not one a thread that used it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from naturali import __version__
from naturali.errors import Conflict
from naturali.ids import new_id
from naturali.model import MemoryStore, utcnow
from naturali.ports.state import (
    GuardRow,
    ProjectionUnavailable,
    SessionRow,
    StateFactory,
    StateStore,
)
from naturali.ports.storage import Storage
from naturali.retrieval.records.eligibility import AvailableRecord, Exclusion, Guard, eligible
from naturali.service.platform import grants
from naturali.vault import ontology as ontology_module
from naturali.vault.ontology import Ontology
from naturali.vault.scan import (
    Issue,
    Scan,
    ScanLimitExceeded,
    ScannedRecord,
    Stat,
    VaultScanner,
    file_stats,
    parsed,
)

# A vault of at most this many record files is listed (one stat a file, ~5 µs) to check its
# match stamp whenever a search finds its catalogue not matched in this open; a larger one
# once an open.
LISTED_EACH_SEARCH = 500


@dataclass
class StoreView:
    """What one query reads: the scan, the eligible entries, and the ontology."""

    scan: Scan
    entries: dict[str, AvailableRecord]
    ontology: Ontology
    guards_version: int
    scan_root: Path = Path(".")
    guarded: frozenset[str] = frozenset()  # ids a guard holds (withdrawn ones included)
    ontology_mtime: float = 0.0  # of the file ``ontology`` was read from
    # Records left out for a reference that names no available record, by id.
    excluded: dict[str, Exclusion] = field(default_factory=dict)
    # Per filter set: (searched, history, snapshot) — see Records._selection.
    selections: dict[str, tuple[list[AvailableRecord], list[AvailableRecord], str]] = field(
        default_factory=dict
    )


@dataclass
class OpenStore:
    store_dir: Path
    scanner: VaultScanner
    state: StateStore
    session: SessionRow
    _cache: tuple[int, int, StoreView] | None = None
    # Entries by ScannedRecord.key, valid for one guards version and ontology.
    _entries: tuple[int, Ontology | None, dict[tuple[str, str], AvailableRecord]] = (-1, None, {})
    _ontology: tuple[float, Ontology] | None = None
    _retired_seen: frozenset[tuple[str, str]] = frozenset()
    _unrecorded_writes: int = 0
    _writes_recorded_at: float = 0.0
    # The view the catalogue last matched in full, with its active records: while the store
    # hands out that same view (a new one when the scan generation, guards or ontology
    # change), a search skips reading every memory's hash back. Held while the store is open
    # (a server's memory does not grow with every store it ever searched).
    matched: tuple[StoreView, int] | None = None
    # Whether a search may list the vault to check the match stamp: once an open for a vault
    # of more than LISTED_EACH_SEARCH files, then its scan's inotify watch says what changed.
    listing_allowed: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0  # callers inside StoreRegistry.opened: it is not closed under them

    def close(self) -> None:
        if self._unrecorded_writes:
            self.state.record_session(self.session, writes=self._unrecorded_writes)
        self.scanner.close()
        self.state.close()

    def unchanged_since_match(self, hashes: Mapping[str, str]) -> bool:
        """Whether the store's files (their stats), guards and ontology, and the catalogue's
        memories (``hashes``, id → content hash), are as they were when the catalogue last
        matched the store in full (``keep_match``): then a reconcile has nothing to do, and
        a store reopened to be searched reads no record. It lists the vault, and a vault of
        more than ``LISTED_EACH_SEARCH`` files clears ``listing_allowed`` for this open."""
        try:
            kept = self.state.catalogue_match()
        except ProjectionUnavailable:  # the stamp is a cache: a full reconcile answers
            return False
        if kept is None:
            return False
        stats = file_stats(self.scanner.vault, self.scanner.max_files)
        self.listing_allowed = len(stats) <= LISTED_EACH_SEARCH
        if len(stats) > self.scanner.max_files:
            return False  # the full scan refuses it
        ontology = _ontology_mtime(self.store_dir)
        return kept == _match_stamp(stats, self.state.guards_version(), ontology, hashes)

    def keep_match(self, view: StoreView, hashes: Mapping[str, str]) -> None:
        """The catalogue holds ``hashes``, which match ``view`` in full: kept in the state."""
        stamp = _match_stamp(view.scan.stats, view.guards_version, view.ontology_mtime, hashes)
        with contextlib.suppress(ProjectionUnavailable):  # the state busy: matched in full again
            self.state.keep_catalogue_match(stamp)

    def view(self) -> StoreView:
        """The store as queries see it: the current scan with guards applied, cached per scan
        generation, guards version and ontology."""
        try:
            scan = self.scanner.scan()
        except ScanLimitExceeded as exc:
            raise Conflict(
                f"{exc}: the store is refused rather than searched in part",
                code="scan_limit_exceeded",
            ) from exc
        self._guard_retired(scan)
        version = self.state.guards_version()
        ontology_mtime, ontology = self._load_ontology()
        with self._lock:
            cached = self._cache
            if (
                cached
                and cached[0] == scan.generation
                and cached[1] == version
                and (cached[2].ontology is ontology)
            ):
                return cached[2]
            if self._entries[0] != version or self._entries[1] is not ontology:
                self._entries = (version, ontology, {})
            reuse = self._entries[2]
            if len(reuse) > len(scan.records) + 1024:  # amortized: files that changed or left
                live = {r.key for r in scan.records.values()}
                for stale in reuse.keys() - live:
                    del reuse[stale]
            view = _view(scan, _guards(self.state.guards()), ontology, version, reuse)
            view.scan_root = self.store_dir / "vault"
            view.ontology_mtime = ontology_mtime
            self._cache = (scan.generation, version, view)
            return view

    def view_at(self, instant: str) -> StoreView:
        """The store as it stood at ``instant`` (a ``utcnow()``-form timestamp), rebuilt from
        its history, never from today's files: each record's revision current then (its
        content from the journal) under the guards recorded by then. Records never written
        through the service have no history and are not in it."""
        records: dict[str, ScannedRecord] = {}
        issues: list[Issue] = []
        for write in self.state.revisions_at(instant):
            item = parsed(write.path, write.content.encode())
            if isinstance(item, Issue):
                issues.append(item)
            else:
                records[item.id] = item
        retired = tuple(r for r in records.values() if r.record.lifecycle != "active")
        scan = Scan(records, issues, instant, retired=retired)
        guards = _guards(g for g in self.state.guards() if g.at <= instant)
        return _view(scan, guards, self._load_ontology()[1], -1, None)

    def note_write(self) -> None:
        """Session activity: this process's row is written with its first write to the store
        (opening a store to search it writes nothing), then writes are added at most once a
        second (a transaction per write would cost a quarter of the write rate). Called under
        the store's write lock."""
        self._unrecorded_writes += 1
        now = time.monotonic()
        if now - self._writes_recorded_at >= 1.0:
            self.state.record_session(self.session, writes=self._unrecorded_writes)
            self._unrecorded_writes = 0
            self._writes_recorded_at = now

    def _guard_retired(self, scan: Scan) -> None:
        """A withdrawal or supersession written into a file by other means (an editor, a
        ``git pull``) gets the guard the service would have recorded, so an older active copy
        of the record cannot bring it back. Only files not seen retired before are checked."""
        fresh = [r for r in scan.retired if r.key not in self._retired_seen]
        if not fresh:
            return
        existing = {(g.record_id, g.lifecycle) for g in self.state.guards()}
        guarded = {record_id for record_id, _ in existing}
        now = utcnow()
        missing = []
        for scanned in fresh:
            record = scanned.record
            if record.lifecycle == "withdrawn" and (scanned.id, "withdrawn") not in existing:
                missing.append(GuardRow(scanned.id, record.revision, "withdrawn", None, "", now))
            elif record.lifecycle == "superseded" and scanned.id not in guarded:
                by = record.front.get("superseded_by")
                missing.append(
                    GuardRow(
                        scanned.id, record.revision, "superseded", str(by) if by else None, "", now
                    )
                )
        if missing:
            self.state.add_guards(missing)
        self._retired_seen = frozenset(r.key for r in scan.retired)

    def _load_ontology(self) -> tuple[float, Ontology]:
        """The ontology, and the mtime of the file it was read from."""
        mtime = _ontology_mtime(self.store_dir)
        if self._ontology is None or self._ontology[0] != mtime:
            self._ontology = (mtime, ontology_module.load(self.store_dir))
        return self._ontology


def _ontology_mtime(store_dir: Path) -> float:
    path = store_dir / "ontology.yaml"
    return path.stat().st_mtime if path.exists() else 0.0


def _match_stamp(
    stats: Mapping[str, Stat], guards_version: int, ontology_mtime: float, hashes: Mapping[str, str]
) -> str:
    """A digest of what a full reconcile's outcome depends on, and of this version (whose
    rules of eligibility it applied)."""
    stamp = hashlib.sha256(f"{__version__}\0{guards_version}\0{ontology_mtime!r}".encode())
    for path, (size, mtime_ns, inode) in sorted(stats.items()):
        stamp.update(f"\0{path}\0{size}:{mtime_ns}:{inode}".encode())
    stamp.update(b"\1")
    for record_id, content_hash in sorted(hashes.items()):
        stamp.update(f"\0{record_id}\0{content_hash}".encode())
    return stamp.hexdigest()


def _guards(rows: Iterable[GuardRow]) -> dict[str, Guard]:
    # Withdrawal outranks supersession when a record has both guards.
    ordered = sorted(rows, key=lambda g: g.lifecycle == "withdrawn")
    return {g.record_id: Guard(g.revision, g.lifecycle, g.superseded_by) for g in ordered}


def _view(
    scan: Scan,
    guards: dict[str, Guard],
    ontology: Ontology,
    version: int,
    reuse: dict[tuple[str, str], AvailableRecord] | None,
) -> StoreView:
    entries, excluded = eligible(scan, guards, ontology, reuse)
    return StoreView(scan, entries, ontology, version, guarded=frozenset(guards), excluded=excluded)


# Stores are opened under one of this many locks (by their id's hash): two stores opened at
# once rarely share one, and the locks do not grow with the stores.
OPENING_STRIPES = 64


class StoreRegistry:
    def __init__(
        self,
        stores_dir: Path,
        open_state: StateFactory,
        open_scratch: StateFactory,
        max_files: int = 200_000,
        max_open: int = 256,
    ) -> None:
        """``open_scratch``: a state that holds projections only, for a query's own use;
        ``max_open``: how many unused stores stay open."""
        self._dir = stores_dir
        self._open_state = open_state
        self._open_scratch = open_scratch
        self._max_files = max_files
        self._max_open = max_open
        # This process's session, recorded in each store's state it opens.
        self._session = SessionRow(new_id("sess"), os.getpid(), socket.gethostname(), utcnow())
        self._contexts: dict[str, OpenStore] = {}  # least recently used first
        self._lock = threading.Lock()
        self._opening = [threading.Lock() for _ in range(OPENING_STRIPES)]

    @contextmanager
    def scratch(self) -> Iterator[StateStore]:
        """A throwaway state for the projections of one query over a store's past (asOf),
        removed afterwards."""
        with tempfile.TemporaryDirectory(prefix="naturali-as-of-") as directory:
            state = self._open_scratch(Path(directory) / "state.sqlite")
            try:
                yield state
            finally:
                state.close()

    def vault(self, store_id: str) -> Path:
        """The vault directory of a store."""
        return self._dir / store_id / "vault"

    @contextmanager
    def opened(self, store_id: str) -> Iterator[OpenStore]:
        """The store's open resources (scanner, state) while the caller uses them; once
        unused, the least recently used beyond ``max_open`` are closed."""
        opened = self._acquired(store_id)
        try:
            yield opened
        finally:
            with self._lock:
                opened.users -= 1
                if not opened.users:
                    # One connection a thread that used it, closed but this thread's: an
                    # idle store holds one (the next other caller connects, ~0.2 ms).
                    opened.state.idle()
                # Oldest first (``_used`` moves a store to the end): only the few to close are read.
                unused = (o for o in self._contexts.values() if not o.users)
                closing = list(islice(unused, max(0, len(self._contexts) - self._max_open)))
                for store in closing:
                    del self._contexts[store.store_dir.name]
            for store in closing:
                store.close()

    def _acquired(self, store_id: str) -> OpenStore:
        """The store's resources, one more user counted. A store is opened (its state opened
        and written, its vault watched) outside the registry's lock, under its stripe of
        ``_opening``: a store slow to open — its state locked by a long write, a slow disk —
        holds up its own callers, never every other team's."""
        with self._lock:
            known = self._used(store_id)
        if known is not None:
            return known
        with self._opening[hash(store_id) % OPENING_STRIPES]:
            with self._lock:
                known = self._used(store_id)  # opened by the caller this one waited for
            if known is not None:
                return known
            fresh = self._open(store_id)
            with self._lock:
                self._contexts[store_id] = fresh
                fresh.users += 1
            return fresh

    def _used(self, store_id: str) -> OpenStore | None:
        """The open store moved to the most recently used end, one more user counted; None
        when it is not open. Under ``_lock``."""
        opened = self._contexts.pop(store_id, None)
        if opened is not None:
            self._contexts[store_id] = opened
            opened.users += 1
        return opened

    def open_count(self) -> int:
        with self._lock:
            return len(self._contexts)

    def _open(self, store_id: str) -> OpenStore:
        store_dir = self._dir / store_id
        (store_dir / "vault").mkdir(parents=True, exist_ok=True)
        state = self._open_state(store_dir / "state.sqlite")
        owner = state.claim_identity(store_id)
        if owner != store_id:
            state.close()
            raise Conflict(
                f"{store_dir / 'state.sqlite'} belongs to memory store {owner}, not "
                f"{store_id}; put back this store's own state.sqlite",
                code="store_identity_mismatch",
            )
        scanner = VaultScanner(store_dir / "vault", self._max_files, fronts=state)
        return OpenStore(store_dir, scanner, state, self._session)

    def forget(self, store_id: str) -> None:
        """Close and drop a deleted store's resources."""
        with self._lock:
            opened = self._contexts.pop(store_id, None)
        if opened is not None:
            opened.close()

    def close(self) -> None:
        """Close every store's resources."""
        with self._lock:
            for opened in self._contexts.values():
                opened.close()
            self._contexts.clear()


def require_store(storage: Storage, project_id: str, store_id: str) -> MemoryStore:
    """The project's memory store, or 404 ``memory_store_not_found`` (a store of another
    project too: ids do not leak). Callers check the role first."""
    store = storage.get_memory_store(project_id, store_id)
    if store is None:
        raise grants.store_not_found(store_id)
    return store

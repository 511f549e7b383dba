"""Per memory store resources, created once per process: the vault scanner, the store's
``state.sqlite``, the ontology, and the eligible-record view cached per (scan, guards)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from naturali.ports.state import StateStore
from naturali.retrieval.eligibility import Entry, Guard, eligible
from naturali.vault import ontology as ontology_module
from naturali.vault.ontology import Ontology
from naturali.vault.scan import Scan, VaultScanner


@dataclass
class View:
    """What one query reads: the scan, the eligible entries, and the ontology."""

    scan: Scan
    entries: dict[str, Entry]
    ontology: Ontology
    guards_version: int
    scan_root: Path = Path(".")
    # Per filter set: (searched, history, snapshot) — see Records._selection.
    selections: dict[str, tuple[list[Entry], list[Entry], str]] = field(default_factory=dict)


@dataclass
class StoreContext:
    store_dir: Path
    scanner: VaultScanner
    state: StateStore
    _cache: tuple[int, int, View] | None = None
    # Entries by id(ScannedRecord), valid for one guards version and ontology.
    _entries: tuple[int, Ontology | None, dict[int, Entry]] = (-1, None, {})
    _ontology: tuple[float, Ontology] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def view(self) -> View:
        scan = self.scanner.scan()
        version = self.state.guards_version()
        ontology = self._load_ontology()
        with self._lock:
            cached = self._cache
            if (
                cached
                and cached[0] == id(scan)
                and cached[1] == version
                and (cached[2].ontology is ontology)
            ):
                return cached[2]
            guards = {
                g.record_id: Guard(g.revision, g.lifecycle, g.superseded_by)
                for g in self.state.guards()
            }
            if self._entries[0] != version or self._entries[1] is not ontology:
                self._entries = (version, ontology, {})
            reuse = self._entries[2]
            live = {id(r) for r in scan.records.values()}
            for stale in reuse.keys() - live:
                del reuse[stale]  # scanned records that left: their ids may be reused
            view = View(
                scan,
                eligible(scan, guards, ontology, reuse),
                ontology,
                version,
                self.store_dir / "vault",
            )
            self._cache = (id(scan), version, view)
            return view

    def _load_ontology(self) -> Ontology:
        path = self.store_dir / "ontology.yaml"
        mtime = path.stat().st_mtime if path.exists() else 0.0
        if self._ontology is None or self._ontology[0] != mtime:
            self._ontology = (mtime, ontology_module.load(self.store_dir))
        return self._ontology[1]


class StoreRegistry:
    def __init__(self, stores_dir: Path, open_state: Callable[[Path], StateStore]) -> None:
        self._dir = stores_dir
        self._open_state = open_state
        self._contexts: dict[str, StoreContext] = {}
        self._lock = threading.Lock()

    def vault(self, store_id: str) -> Path:
        return self._dir / store_id / "vault"

    def context(self, store_id: str) -> StoreContext:
        with self._lock:
            ctx = self._contexts.get(store_id)
            if ctx is None:
                store_dir = self._dir / store_id
                (store_dir / "vault").mkdir(parents=True, exist_ok=True)
                ctx = StoreContext(
                    store_dir,
                    VaultScanner(store_dir / "vault"),
                    self._open_state(store_dir / "state.sqlite"),
                )
                self._contexts[store_id] = ctx
            return ctx

    def forget(self, store_id: str) -> None:
        with self._lock:
            ctx = self._contexts.pop(store_id, None)
        if ctx is not None:
            ctx.scanner.close()
            ctx.state.close()

    def close(self) -> None:
        with self._lock:
            for ctx in self._contexts.values():
                ctx.scanner.close()
                ctx.state.close()
            self._contexts.clear()

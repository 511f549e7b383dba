"""Descriptors a server holds stay bounded: at most ``open_stores`` memory stores stay open
while unused (many stores used in turn do not hold a descriptor each), an evicted store
answers as before when next asked, a store is never closed under a caller using it, a store
slow to open holds up only its own callers (service/memory/stores.py), a closed store's view is
freed, a store opened again to be read writes nothing, a store reopened as it was is searched
without reading its records (while an edit or a catalogue that changed meanwhile is still
caught), and a thread's database connection closes once the thread ended."""

from __future__ import annotations

import gc
import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Any

from conftest import Api, make_api, open_files
from naturali.embed.onnx import OnnxEmbedder
from naturali.model import MemoryStore
from naturali.ports.state import ProjectionUnavailable
from naturali.service.memory import stores
from naturali.service.memory.stores import StoreRegistry, StoreView
from naturali.storage.sqlite.connection import Database
from naturali.storage.sqlite.state import SqliteState
from naturali.vault.watch import VaultWatch


def _open_states(data_dir: Path) -> int:
    """Descriptors this process holds on stores' databases (each open store: three)."""
    stores = str(data_dir / "stores")
    return sum(f.startswith(stores) and "state.sqlite" in f for f in open_files())


def _memory(api: Api, project_id: str, store_id: str, text: str) -> None:
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    assert api.post(url, json={"content": text}).status_code == 201


def test_many_stores_used_in_turn_hold_a_bounded_set_open(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    for api in make_api(tmp_path, embedder, open_stores=2):
        project_id = api.project()
        stores = []
        for n in range(8):
            r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": f"s{n}"})
            stores.append(r.json()["id"])
            _memory(api, project_id, stores[-1], f"the kestrel number {n} nests on cliff {n}")
        for _ in range(2):  # every store reopened in turn: descriptors do not grow
            for n, store_id in enumerate(stores):
                body = {"query": f"kestrel cliff {n}", "memory_store_ids": [store_id]}
                hits = api.search(project_id, **body).json()["results"]
                assert hits and f"cliff {n}" in hits[0]["content"]
                url = f"/v1/projects/{project_id}/memory_stores/{store_id}/knowledge/grep"
                grep = api.post(url, json={"query": "kestrel"}).json()
                assert grep["total"] == 1
        assert api.naturali.stores.open_count() <= 2
        assert _open_states(tmp_path / "data") <= 2 * 3  # two kept, one connection each
        _memory(api, project_id, stores[0], "a second kestrel, written after a reopen")
        url = f"/v1/projects/{project_id}/memory_stores/{stores[0]}/knowledge/grep"
        assert api.post(url, json={"query": "kestrel"}).json()["total"] == 2


def _store(api: Api, project_id: str) -> MemoryStore:
    r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": "s"})
    user = api.naturali.auth.authenticate(api.token)
    return api.naturali.memories.get_store(user, project_id, r.json()["id"])


def _reconciled(api: Api, store: MemoryStore) -> weakref.ref[StoreView]:
    """The view a reconcile of the store matched (the open store's, while it is open)."""
    with api.naturali.stores.opened(store.id) as opened:
        api.naturali.memories.reconcile(store)
        return weakref.ref(opened.view())


def test_a_closed_stores_view_is_not_held(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    """A server does not keep what it read of every store it ever searched: once closed, a
    store's view (its records read and parsed) is freed."""
    for api in make_api(tmp_path, embedder, open_stores=0):
        project_id = api.project()
        store = _store(api, project_id)
        _memory(api, project_id, store.id, "the kestrel nests on the north cliff")
        view = _reconciled(api, store)
        assert api.naturali.stores.open_count() == 0
        gc.collect()
        assert view() is None


def _use(registry: StoreRegistry, store_id: str, done: threading.Event) -> None:
    with registry.opened(store_id):
        pass
    done.set()


def test_a_store_in_use_is_not_closed_under_its_caller(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    for api in make_api(tmp_path, embedder, open_stores=1):
        project_id = api.project()
        ids = []
        for name in ("held", "other"):
            r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": name})
            ids.append(r.json()["id"])
        registry = api.naturali.stores
        with registry.opened(ids[0]) as held:
            done = threading.Event()
            threading.Thread(target=_use, args=(registry, ids[1], done)).start()
            assert done.wait(30)
            assert held.view().scan is not None  # still open: its state answers
            held.state.guards_version()
        assert registry.open_count() == 1  # once unused, one of the two was closed


def test_a_store_slow_to_open_holds_up_only_its_own_callers(tmp_path: Path) -> None:
    """A store whose state is slow to open (a slow disk, a long write holding it) keeps its
    own callers waiting; meanwhile another team's store opens as usual."""
    waiting, release = threading.Event(), threading.Event()

    def open_state(path: Path) -> SqliteState:
        if path.parent.name == "slow":
            waiting.set()
            release.wait(30)
        return SqliteState(path)

    registry = StoreRegistry(tmp_path / "stores", open_state, SqliteState)
    slow, other = threading.Event(), threading.Event()
    threading.Thread(target=_use, args=(registry, "slow", slow), daemon=True).start()
    assert waiting.wait(30)
    threading.Thread(target=_use, args=(registry, "other", other), daemon=True).start()
    assert other.wait(10)
    assert not slow.is_set()
    release.set()
    assert slow.wait(30)
    assert registry.open_count() == 2
    registry.close()


def test_a_store_opened_again_to_be_read_writes_nothing(tmp_path: Path) -> None:
    """A cold search opens its store: when the store was opened before, opening, viewing and
    closing it commit nothing to its state (a write costs fsyncs, and closing the last
    connection then checkpoints its WAL)."""
    registry = StoreRegistry(tmp_path / "stores", SqliteState, SqliteState, max_open=0)
    with registry.opened("team") as opened:  # its first open makes the schema and identity
        opened.view()
    path = tmp_path / "stores" / "team" / "state.sqlite"
    with sqlite3.connect(path) as watcher:
        (before,) = watcher.execute("PRAGMA data_version").fetchone()
        for _ in range(3):
            with registry.opened("team") as opened:
                assert opened.view().scan is not None
        assert registry.open_count() == 0  # closed each time: each use opened it again
        (after,) = watcher.execute("PRAGMA data_version").fetchone()
    assert after == before  # no other connection committed
    registry.close()


def test_a_state_made_with_an_older_schema_is_brought_up_to_date(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    SqliteState(path).close()
    with sqlite3.connect(path) as conn:  # as a version without the parsed fronts left it
        conn.execute("DROP TABLE parsed_fronts_v1")
        conn.execute("PRAGMA user_version = 0")
    state = SqliteState(path)
    assert state.known_fronts(["d"]) == {}  # reads the table the open made again
    state.close()


def test_a_threads_connection_closes_after_the_thread_ends(tmp_path: Path) -> None:
    """Each thread reads through its own connection; one left by a thread that ended (a
    snapshot's save runs on a thread of its own) is closed, not held until shutdown."""
    database = Database(tmp_path / "catalog.sqlite")

    def read() -> None:
        database.conn().execute("SELECT 1")

    for _ in range(20):
        worker = threading.Thread(target=read)
        worker.start()
        worker.join()
    read()
    held = [f for f in open_files() if f == str(tmp_path / "catalog.sqlite")]
    assert len(held) <= 2  # this thread's, and at most the last worker's
    database.close()


def test_every_vault_is_watched_through_one_inotify_instance(tmp_path: Path) -> None:
    """Twenty vaults, one instance (a user may hold 128; closing one costs the kernel ~15 ms):
    an edit is seen by its own vault's watch and no other's."""
    before = _inotify_instances()
    watches = []
    for n in range(20):
        vault = tmp_path / f"v{n}"
        (vault / "sub").mkdir(parents=True)
        watch = VaultWatch(vault)
        watch.start()
        watches.append(watch)
    assert _inotify_instances() - before <= 1
    (tmp_path / "v3" / "sub" / "a.md").write_text("x")
    (tmp_path / "v7" / "b.md").write_text("y")
    seen = [w.changes() for w in watches]
    assert seen[3] == {"sub/a.md"} and seen[7] == {"b.md"}
    assert all(s == set() for n, s in enumerate(seen) if n not in (3, 7))
    for watch in watches:
        watch.close()
    (tmp_path / "v3" / "c.md").write_text("z")
    assert watches[3].changes() is None  # closed: a full scan decides


def _inotify_instances() -> int:
    return sum(f == "anon_inode:inotify" for f in open_files())


def test_a_vault_watched_again_keeps_its_watch_when_the_old_one_closes(tmp_path: Path) -> None:
    """A store reopened while its old handle still closes watches the same folder: the kernel
    gives the same descriptor, and the old watch closing must not take it from the new."""
    old, new = VaultWatch(tmp_path), VaultWatch(tmp_path)
    old.start()
    new.start()
    old.close()
    (tmp_path / "a.md").write_text("x")
    assert new.changes() == {"a.md"}
    new.close()


def _found(api: Api, project_id: str, store_id: str, query: str) -> list[str]:
    body = {"query": query, "memory_store_ids": [store_id], "include_documents": False}
    r = api.search(project_id, **body)
    assert r.status_code == 200, r.text
    return [hit["content"] for hit in r.json()["results"]]


def _scans(api: Api) -> list[str]:
    """The stores whose vault is scanned (read and parsed) from now on."""
    scanned: list[str] = []
    registry = api.naturali.stores
    original = registry._open

    def opening(store_id: str) -> Any:
        opened = original(store_id)
        scan = opened.scanner.scan

        def counted() -> Any:
            scanned.append(store_id)
            return scan()

        opened.scanner.scan = counted  # type: ignore[method-assign]
        return opened

    registry._open = opening  # type: ignore[method-assign]
    return scanned


def test_a_store_reopened_as_it_was_is_searched_without_reading_its_records(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    """A server of many stores reopens one for almost every search: when its files, guards
    and ontology and the catalogue's memories are as they were when they last matched, the
    search reads no record (the match's stamp is kept in the store's state)."""
    for api in make_api(tmp_path, embedder, open_stores=0):
        project_id = api.project()
        store = _store(api, project_id)
        _memory(api, project_id, store.id, "the kestrel nests on the north cliff")
        first = _found(api, project_id, store.id, "where does the kestrel nest")
        scanned = _scans(api)
        assert _found(api, project_id, store.id, "where does the kestrel nest") == first
        assert scanned == [] and api.naturali.stores.open_count() == 0


def test_a_record_edited_while_its_store_was_closed_is_found_at_the_next_search(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    for api in make_api(tmp_path, embedder, backend, open_stores=0):
        project_id = api.project()
        store = _store(api, project_id)
        _memory(api, project_id, store.id, "the kestrel nests on the north cliff")
        assert "north cliff" in _found(api, project_id, store.id, "kestrel nest")[0]
        (path,) = (tmp_path / "data" / "stores" / store.id / "vault").rglob("*.md")
        path.write_text(path.read_text().replace("north cliff", "old church tower"))
        assert "church tower" in _found(api, project_id, store.id, "kestrel nest")[0]


def test_a_memory_the_catalogue_lost_is_indexed_again_by_the_next_search(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    """The stamp is of the catalogue's memories too: one removed from the catalogue alone
    (its file unchanged) is not taken for a match."""
    for api in make_api(tmp_path, embedder, open_stores=0):
        project_id = api.project()
        store = _store(api, project_id)
        _memory(api, project_id, store.id, "the kestrel nests on the north cliff")
        assert _found(api, project_id, store.id, "kestrel nest")
        (memory_id,) = api.naturali.storage.memory_hashes(store.id)
        api.naturali.storage.remove_memory(store.id, memory_id)
        assert "north cliff" in _found(api, project_id, store.id, "kestrel nest")[0]


def test_a_match_stamp_that_cannot_be_read_or_kept_fails_no_search(
    tmp_path: Path, embedder: OnnxEmbedder, monkeypatch: Any
) -> None:
    """The stamp is a cache: a state too busy to read or keep it costs a full reconcile."""

    def busy(*_: Any) -> None:
        raise ProjectionUnavailable("database is locked")

    monkeypatch.setattr(SqliteState, "catalogue_match", busy)
    monkeypatch.setattr(SqliteState, "keep_catalogue_match", busy)
    for api in make_api(tmp_path, embedder, open_stores=0):
        project_id = api.project()
        store = _store(api, project_id)
        _memory(api, project_id, store.id, "the kestrel nests on the north cliff")
        for _ in range(2):
            assert "north cliff" in _found(api, project_id, store.id, "kestrel nest")[0]


def test_a_large_store_searched_again_while_open_is_not_listed_each_time(
    tmp_path: Path, embedder: OnnxEmbedder, monkeypatch: Any
) -> None:
    """A large vault's stamp is looked at once an open: later searches of the open store
    learn what changed from its scan's inotify watch, not from a stat of every file (tens of
    milliseconds a search at ten thousand files)."""
    monkeypatch.setattr(stores, "LISTED_EACH_SEARCH", 0)  # this one-file vault counts as large
    for api in make_api(tmp_path, embedder):
        project_id = api.project()
        store = _store(api, project_id)
        _memory(api, project_id, store.id, "the kestrel nests on the north cliff")
        _found(api, project_id, store.id, "kestrel nest")  # matched in full: stamped
        token = api.token
    listed: list[Path] = []
    stat_all = stores.file_stats

    def listing(vault: Path, limit: int) -> Any:
        listed.append(vault)
        return stat_all(vault, limit)

    monkeypatch.setattr(stores, "file_stats", listing)
    for api in make_api(tmp_path, embedder, token=token):  # a restart: the store opens again
        for _ in range(3):
            assert "north cliff" in _found(api, project_id, store.id, "kestrel nest")[0]
    assert len(listed) == 1

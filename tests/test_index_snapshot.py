"""A search index saved in the cache dir: a restarted server loads it and reads from the store
only what changed since; one that no longer matches the store is ignored."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from conftest import Api, make_api
from naturali.api.app import create_app
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.retrieval.indexes import registry, snapshot
from naturali.settings import Settings

DOCS = {
    "/refunds.md": "# Refunds\n\nRefunds are processed within five business days.",
    "/oncall.md": "# On call\n\nEscalations go to the on-call engineer first.",
    "/tea.md": "# Kitchen\n\nThe kitchen has green tea, coffee and oat milk.",
}
QUERIES = ("how long do refunds take", "who handles escalations", "is there coffee")


@contextmanager
def _server(
    tmp_path: Path,
    embedder: OnnxEmbedder,
    backend: dict[str, Any],
    token: str | None = None,
    snapshot_rows: int = 1,
) -> Iterator[Api]:
    """A server on the test's data dir (a restart reuses it and the owner's token); closing it
    runs ``Services.close()``, which saves the snapshot."""
    yield from make_api(tmp_path, embedder, backend, token, index_snapshot_rows=snapshot_rows)


def _answers(api: Api, project_id: str) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        r = api.search(project_id, query=query, include_memories=False)
        assert r.status_code == 200, r.text
        out.append([(h["path"], round(h["score"], 5)) for h in r.json()["results"]])
    return out


def _sync_cursors(api: Api) -> list[int]:
    """The chunk cursor each sync asks the store from, as they happen."""
    cursors: list[int] = []
    storage = api.naturali.storage
    original = storage.chunk_changes

    def spy(project_id: str, chunk_cursor: int, removal_cursor: int) -> Any:
        cursors.append(chunk_cursor)
        return original(project_id, chunk_cursor, removal_cursor)

    storage.chunk_changes = spy  # type: ignore[method-assign]
    return cursors


def _saved_project(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> tuple[str, dict[str, str], str]:
    """A project of three documents, searched once; the server's shutdown saves its index."""
    with _server(tmp_path, embedder, backend) as api:
        project_id = api.project()
        ids = {path: api.doc(project_id, path, text)["id"] for path, text in DOCS.items()}
        _answers(api, project_id)
    return project_id, ids, api.token


def test_a_restarted_server_reads_only_what_changed_since_the_snapshot(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    project_id, ids, token = _saved_project(tmp_path, embedder, backend)
    assert (tmp_path / "data" / "cache" / "indexes" / project_id / "meta.json").is_file()

    with _server(tmp_path, embedder, backend, token) as api:
        # Changes while no index is loaded: an older document gone, a new one added.
        gone = f"/v1/projects/{project_id}/documents/{ids['/refunds.md']}"
        assert api.delete(gone).status_code == 200
        api.doc(project_id, "/pets.md", "# Pets\n\nDogs are welcome in the office on Fridays.")
        cursors = _sync_cursors(api)
        warm = _answers(api, project_id)
    assert cursors[0] > 0  # started from the snapshot, not from the first chunk
    assert not any(path == "/refunds.md" for answer in warm for path, _ in answer)
    assert any(path == "/pets.md" for answer in warm for path, _ in answer)

    shutil.rmtree(tmp_path / "data" / "cache" / "indexes")
    with _server(tmp_path, embedder, backend, token) as api:
        cursors = _sync_cursors(api)
        assert _answers(api, project_id) == warm  # the same answers as an index built anew
    assert cursors[0] == 0


def test_a_snapshot_the_store_no_longer_matches_is_ignored(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    project_id, ids, token = _saved_project(tmp_path, embedder, backend)
    # The store loses the newest chunk the snapshot saw (as after restoring an older backup).
    with _server(tmp_path, embedder, backend, token) as api:
        gone = f"/v1/projects/{project_id}/documents/{ids['/tea.md']}"
        assert api.delete(gone).status_code == 200
        cursors = _sync_cursors(api)
        answers = _answers(api, project_id)
    assert cursors[0] == 0  # rebuilt from the store
    assert not any(path == "/tea.md" for answer in answers for path, _ in answer)


@pytest.mark.parametrize(
    ("damaged", "kept"),
    [("arrays.bin", 0.5), ("arrays.bin", 0.999), ("arrays.bin", 0.0), ("meta.json", 0.5)],
)
def test_a_damaged_snapshot_is_ignored(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any], damaged: str, kept: float
) -> None:
    """A torn write of either file (the float32 rows at the end of the arrays cut short, the
    postings in the middle, nothing written) is a snapshot that does not match."""
    project_id, _, token = _saved_project(tmp_path, embedder, backend)
    saved = tmp_path / "data" / "cache" / "indexes" / project_id / damaged
    saved.write_bytes(saved.read_bytes()[: int(saved.stat().st_size * kept)])
    with _server(tmp_path, embedder, backend, token) as api:
        cursors = _sync_cursors(api)
        answers = _answers(api, project_id)
    assert cursors[0] == 0  # rebuilt from the store
    assert answers[0][0][0] == "/refunds.md"


def test_a_restarted_server_restores_its_saved_indexes_before_any_search(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """``Services.restore_indexes`` (``naturali serve`` runs it as it starts): the saved index
    is loaded and synced with what the store changed since, so the first search syncs
    nothing; a snapshot of a project the store does not hold, and a project without one, are
    left alone."""
    project_id, ids, token = _saved_project(tmp_path, embedder, backend)
    with _server(tmp_path, embedder, backend, token) as api:
        gone = f"/v1/projects/{project_id}/documents/{ids['/refunds.md']}"
        assert api.delete(gone).status_code == 200
        api.doc(project_id, "/pets.md", "# Pets\n\nDogs are welcome in the office on Fridays.")
        unsaved = api.project()  # no snapshot: left to its first search
    saved = tmp_path / "data" / "cache" / "indexes"
    shutil.copytree(saved / project_id, saved / "proj_not_in_this_store")  # another store's
    with _server(tmp_path, embedder, backend, token) as api:
        assert api.naturali.restore_indexes() == [project_id]
        assert list(api.naturali.indexes.cache.loaded()) == [project_id]
        cursors = _sync_cursors(api)
        answers = _answers(api, project_id)
        assert api.naturali.restore_indexes() == []  # loaded already: nothing to do
        assert unsaved not in api.naturali.indexes.cache.loaded()
    assert len(set(cursors)) == 1  # every search found the index up to date
    assert not any(path == "/refunds.md" for answer in answers for path, _ in answer)
    assert any(path == "/pets.md" for answer in answers for path, _ in answer)


def test_what_a_killed_save_left_does_not_stop_the_next_save(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """A save killed between its renames leaves the replaced snapshot (``.retired-…``) and
    one killed while writing its staging directory; the next process's save of the project
    succeeds, and removes the staging directory once it is old enough to be no live save's."""
    project_id, _, token = _saved_project(tmp_path, embedder, backend)
    indexes = tmp_path / "data" / "cache" / "indexes"
    retired = indexes / f".retired-{project_id}"
    shutil.copytree(indexes / project_id, retired)
    staging = indexes / ".snapshot-killed"
    staging.mkdir()
    os.utime(staging, (1_000, 1_000))
    snapshot._cleared.clear()  # a new process: it has cleared nothing yet
    with _server(tmp_path, embedder, backend, token) as api:
        api.doc(project_id, "/pets.md", "# Pets\n\nDogs are welcome in the office on Fridays.")
        _answers(api, project_id)
    assert not staging.exists() and not retired.exists()
    with _server(tmp_path, embedder, backend, token) as api:
        cursors = _sync_cursors(api)
        answers = _answers(api, project_id)
    assert cursors[0] > 0  # read from the snapshot the save wrote, with the new document
    assert any(path == "/pets.md" for answer in answers for path, _ in answer)


def test_the_saved_snapshots_are_listed_newest_first_without_unfinished_ones(
    tmp_path: Path,
) -> None:
    """What ``restore`` walks: projects whose snapshot has its metadata, most recently saved
    first; a staging or retired entry (a save in progress) and a folder without metadata are
    not projects."""
    for name, saved_at in (("proj_old", 1_000), ("proj_new", 2_000), (".retired-proj_x", 3_000)):
        meta = tmp_path / name / "meta.json"
        meta.parent.mkdir()
        meta.write_text("{}")
        os.utime(meta, (saved_at, saved_at))
    (tmp_path / "proj_empty").mkdir()
    assert snapshot.saved(tmp_path) == ["proj_new", "proj_old"]
    assert snapshot.saved(tmp_path / "missing") == []


def test_an_evicted_index_is_saved_and_comes_back_from_its_snapshot_alone(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """The budget drops an index changed since its last snapshot: it is saved as it goes,
    and its next search reads nothing from the store but what changed after."""
    settings = Settings(
        data_dir=tmp_path / "data", index_memory_bytes=1, index_snapshot_rows=2, **backend
    )
    naturali = build_services(settings, embedder=embedder)
    token = naturali.bootstrap()
    assert token
    try:
        with TestClient(create_app(naturali), raise_server_exceptions=False) as http:
            api = Api(http, naturali, token)
            first, second = api.project(), api.project()
            for path, text in list(DOCS.items())[:2]:
                api.doc(first, path, text)
            api.search(first, query="refunds")  # two rows appended: saved
            _join_saves(naturali)
            api.doc(first, "/tea.md", DOCS["/tea.md"])
            before = _answers(api, first)  # one more: not yet worth a snapshot
            api.doc(second, "/b.md", "Invoices are sent monthly.")
            api.search(second, query="invoices")  # the first is dropped, and saved
            _join_saves(naturali)
            assert first not in naturali.indexes.cache.loaded()
            added: list[int] = []
            original = naturali.storage.chunk_changes

            def spy(project_id: str, chunk_cursor: int, removal_cursor: int) -> Any:
                changes = original(project_id, chunk_cursor, removal_cursor)
                if project_id == first:
                    added.append(len(changes.added))
                return changes

            naturali.storage.chunk_changes = spy  # type: ignore[method-assign]
            assert _answers(api, first) == before
            assert added and not any(added)  # all of it from the snapshot
    finally:
        naturali.close()


def _join_saves(naturali: Any) -> None:
    assert naturali.indexes.jobs.idle(timeout=60)


def _filters(ids: list[str], stores: list[str]) -> list[dict[str, Any]]:
    """A value of every search filter (each narrowing one of ``Selection``'s fields), alone
    and with another."""
    return [
        {"document_paths": ["/support/"]},
        {"tags": {"team": "ops"}},
        {"tags": {"customer": "acme"}},
        {"document_paths": ["/ops/"], "tags": {"team": "ops"}},
        {"document_ids": ids[:1]},
        {"memory_store_ids": stores[:1]},
        {"memory_store_ids": stores, "tags": {"team": "support"}},
    ]


def test_every_filter_answers_the_same_from_a_restored_index(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """The owners come back from the snapshot's columns (read when a search asks): every
    filter — each field of ``Selection`` that narrows, so a new one must be here — selects
    and ranks as before the restart, over documents and memories."""
    from dataclasses import fields

    from naturali.retrieval.index import Selection

    narrowing = {f.name for f in fields(Selection) if "narrows" in f.metadata}
    assert narrowing == {name for f in _filters([], []) for name in f}, "a filter untested"

    def answers(api: Api, project_id: str, ids: list[str], stores: list[str]) -> list[Any]:
        out = []
        for f in _filters(ids, stores):
            r = api.search(project_id, query="who handles refunds", **f)
            assert r.status_code == 200, r.text
            out.append(
                [(h.get("path"), h.get("memory_id"), h["score"]) for h in r.json()["results"]]
            )
        return out

    with _server(tmp_path, embedder, backend) as api:
        project_id = api.project()
        ids = [
            api.doc(
                project_id, "/support/refunds.md", DOCS["/refunds.md"], tags={"team": "support"}
            )["id"],
            api.doc(project_id, "/ops/oncall.md", DOCS["/oncall.md"], tags={"team": "ops"})["id"],
            api.doc(project_id, "/ops/tea.md", DOCS["/tea.md"], title="Tea", tags={"team": "ops"})[
                "id"
            ],
        ]
        stores = list(_memories(api, project_id))
        before = answers(api, project_id, ids, stores)
        token = api.token
    # Documents alone narrow documents (memories stay in), stores alone memories.
    assert [len(a) for a in before] == [3, 2, 1, 2, 3, 4, 3]
    with _server(tmp_path, embedder, backend, token) as api:
        cursors = _sync_cursors(api)
        assert answers(api, project_id, ids, stores) == before
    assert cursors[0] > 0  # from the snapshot


def test_an_owners_every_column_round_trips_through_a_snapshots_files() -> None:
    """``OwnerAttrs`` is its source, its id and one field a column: a column added to one and
    not the other fails here; each comes back from the files as it was."""
    from naturali.model import SourceType
    from naturali.retrieval.owners import COLUMNS, OwnerAttrs, Owners, owner_key

    assert OwnerAttrs._fields == ("source", "owner_id", *(c.name for c in COLUMNS))
    written = Owners()
    made = {
        owner_key(SourceType.DOCUMENT, "doc_1"): OwnerAttrs(
            SourceType.DOCUMENT, "doc_1", path="/a/b.md", tags=(("team", "ops"),)
        ),
        owner_key(SourceType.MEMORY, "s/m"): OwnerAttrs(
            SourceType.MEMORY, "m", store_id="s", tags=(("k", "v"), ("k", "w"))
        ),
    }
    for key, attrs in made.items():
        written.set(written.add(key), attrs)
    columns, known = written.columns()
    read = Owners(columns, known)
    assert [read.get(read.code_of(key) or 0) for key in made] == list(made.values())


def _memories(api: Api, project_id: str) -> tuple[str, str]:
    base = f"/v1/projects/{project_id}/memory_stores"
    support = api.post(base, json={"name": "support", "tags": {"team": "support"}}).json()
    sales = api.post(base, json={"name": "sales", "tags": {"team": "sales"}}).json()
    for store, content, tags in (
        (support, "Customer Acme handles refunds by bank transfer.", {"customer": "acme"}),
        (sales, "Globex's refunds are handled twice a week.", {"team": "support"}),
    ):
        r = api.post(f"{base}/{store['id']}/memories", json={"content": content, "tags": tags})
        assert r.status_code == 201, r.text
    return support["id"], sales["id"]


def test_a_small_project_read_whole_is_saved_and_comes_back_from_its_snapshot(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """Under the default ``index_snapshot_rows``, a project of three documents is saved once
    its first search reads it whole (not left to be tokenised again by the next server); a
    restarted server reads the snapshot, not the store, and answers the same."""
    rows = Settings().index_snapshot_rows
    with _server(tmp_path, embedder, backend, snapshot_rows=rows) as api:
        project_id = api.project()
        for path, text in DOCS.items():
            api.doc(project_id, path, text)
        before = _answers(api, project_id)
        api.naturali.indexes.close()  # waits for the save the first search set off
        saved = tmp_path / "data" / "cache" / "indexes" / project_id
        assert sorted(p.name for p in saved.iterdir()) == ["arrays.bin", "meta.json"]
        token = api.token
    with _server(tmp_path, embedder, backend, token, snapshot_rows=rows) as api:
        cursors = _sync_cursors(api)
        assert _answers(api, project_id) == before
    assert cursors[0] > 0  # from the snapshot: only what changed since


def test_a_small_project_written_and_never_searched_has_its_snapshot_saved(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """The first search of a project a server never loaded reads one file, not every chunk
    (``IndexRegistry.written``), and answers as an index built anew."""
    with _server(tmp_path, embedder, backend) as api:
        project_id = api.project()
        for path, text in DOCS.items():
            api.doc(project_id, path, text)
        token = api.token
    assert (tmp_path / "data" / "cache" / "indexes" / project_id / "meta.json").is_file()

    with _server(tmp_path, embedder, backend, token) as api:
        cursors = _sync_cursors(api)
        prepared = _answers(api, project_id)
    assert cursors[0] > 0  # from the snapshot the writes left
    shutil.rmtree(tmp_path / "data" / "cache" / "indexes")
    with _server(tmp_path, embedder, backend, token) as api:
        assert _answers(api, project_id) == prepared


def test_a_larger_project_is_left_to_its_searches(
    tmp_path: Path, embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "PREPARED_ROWS", 2)
    with _server(tmp_path, embedder, {}) as api:
        project_id = api.project()
        meta = tmp_path / "data" / "cache" / "indexes" / project_id / "meta.json"
        for written, (path, text) in enumerate(DOCS.items(), start=1):
            api.doc(project_id, path, text)
            if written <= registry.PREPARED_ROWS:  # its snapshot brought up to date
                _wait_for_rows(meta, written)
    assert json.loads(meta.read_text())["n"] == 2  # kept while it was small, not after


def _wait_for_rows(meta: Path, rows: int, timeout: float = 60.0) -> None:
    """Until the snapshot ``meta`` describes holds ``rows`` or more: the preparer is one
    thread of its own, so a write that comes sooner would find the project larger already."""
    deadline = time.monotonic() + timeout
    while not (meta.is_file() and json.loads(meta.read_text())["n"] >= rows):
        assert time.monotonic() < deadline, f"no snapshot of {rows} rows in {timeout} s"
        time.sleep(0.02)

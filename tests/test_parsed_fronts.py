"""A store's records' front matter is parsed once per content, across restarts
(vault/fronts.py): a restarted server's first search of a store parses none of it, a file
edited meanwhile is read as it now is, and what the state holds follows the files."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.storage.sqlite.state import _as_json
from naturali.vault import fronts


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every front matter parsed from here on (the in-process cache bypassed)."""
    parsed: list[str] = []
    real = fronts.parsed_front.__wrapped__

    def parse(text: str) -> Any:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(fronts, "parsed_front", parse)
    return parsed


def _held(data_dir: Path) -> int:
    """Parsed front matters the store states hold (SQLite's, or the projections' files)."""
    files = list(data_dir.rglob("state.sqlite"))
    return sum(
        sqlite3.connect(f).execute("SELECT count(*) FROM parsed_fronts_v1").fetchone()[0]
        for f in files
    )


def _search(api: Api, project_id: str, store_id: str, query: str) -> list[str]:
    body = {"query": query, "memory_store_ids": [store_id], "include_documents": False}
    return [r["content"] for r in api.search(project_id, **body).json()["results"]]


def test_a_restarted_server_parses_no_front_matter_it_read_before(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for api in make_api(tmp_path, embedder, backend):
        project_id = api.project()
        store_id = api.post(
            f"/v1/projects/{project_id}/memory_stores", json={"name": "notes"}
        ).json()["id"]
        for text in ("the heron fishes at dawn", "the owl hunts at night", "the wren sings"):
            url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
            assert api.post(url, json={"content": text}).status_code == 201
        vault, token = api.naturali.memories.vault(store_id), api.token
    assert _held(tmp_path / "data") == 3
    parsed = _counting(monkeypatch)
    for api in make_api(tmp_path, embedder, backend, token):
        assert "the owl hunts at night" in _search(api, project_id, store_id, "owl")
    assert parsed == []  # every record known by its front matter's digest

    edited = next(p for p in vault.glob("*.md") if "owl hunts" in p.read_text())
    edited.write_text(edited.read_text().replace("revision: 1", "revision: 2"))
    (next(p for p in vault.glob("*.md") if "wren sings" in p.read_text())).unlink()
    for api in make_api(tmp_path, embedder, backend, token):
        assert "the owl hunts at night" in _search(api, project_id, store_id, "owl")
        assert not any("wren" in hit for hit in _search(api, project_id, store_id, "wren"))
        with api.naturali.stores.opened(store_id) as opened:
            records = opened.view().scan.records.values()
        owl = next(r.record for r in records if "owl hunts" in r.record.body)
        assert owl.revision == 2  # the edit, not what the state held of the file before
    assert len(parsed) == 1  # the edited one alone
    assert _held(tmp_path / "data") == 2  # the old owl and the wren forgotten


def test_what_json_cannot_give_back_is_parsed_again() -> None:
    assert _as_json({"id": "a", "tags": ["x"], "n": 1, "f": 1.5, "ok": True, "v": None})
    assert _as_json({1: "a number for a key"}) is None
    assert _as_json({"when": float("nan")}) is None
    assert _as_json({"raw": b"bytes"}) is None
    assert _as_json({"t": "\udc00"}) == '{"t": "\\udc00"}'  # escaped: SQLite stores it

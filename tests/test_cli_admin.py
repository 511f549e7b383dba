"""``naturali admin`` works on the data dir: users, tokens, projects, members."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
from typer.testing import CliRunner

from naturali.cli.main import app
from naturali.compose import build_services
from naturali.settings import Settings
from naturali.storage.postgres.migrations import MIGRATIONS
from postgres import PostgresServer

runner = CliRunner()


def _run(*args: str) -> dict[str, object] | list[object]:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    parsed: dict[str, object] | list[object] = json.loads(result.stdout)
    return parsed


def test_admin_round_trip(tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path)]
    alice = _run("admin", "user", "create", "alice", *data)
    bob = _run("admin", "user", "create", "bob", *data)
    assert isinstance(alice, dict) and isinstance(bob, dict)
    project = _run("admin", "project", "create", "docs", "--owner", str(alice["id"]), *data)
    assert isinstance(project, dict)
    _run(
        "admin",
        "project",
        "add-member",
        str(project["id"]),
        str(bob["id"]),
        "--role",
        "editor",
        *data,
    )
    token = _run("admin", "user", "token", str(bob["id"]), *data)
    assert isinstance(token, dict)
    naturali = build_services(Settings(data_dir=tmp_path))
    user = naturali.auth.authenticate(str(token["token"]))
    assert user.id == bob["id"]
    assert naturali.auth.require(user, str(project["id"]), "write").role == "editor"
    listed = _run("admin", "project", "list", "--user", str(bob["id"]), *data)
    assert listed == [{"id": project["id"], "name": "docs", "role": "editor"}]
    naturali.close()


def test_admin_errors_exit_non_zero(tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path)]
    result = runner.invoke(app, ["admin", "project", "create", "x", "--owner", "user_nope", *data])
    assert result.exit_code != 0 and "user_nope" in result.output
    alice = _run("admin", "user", "create", "alice", *data)
    assert isinstance(alice, dict)
    project = _run("admin", "project", "create", "p", "--owner", str(alice["id"]), *data)
    assert isinstance(project, dict)
    bad_role = runner.invoke(
        app,
        [
            "admin",
            "project",
            "add-member",
            str(project["id"]),
            str(alice["id"]),
            "--role",
            "god",
            *data,
        ],
    )
    assert bad_role.exit_code == 2 and "role" in bad_role.output


def test_search_knowledge_local_on_the_data_dir(tmp_path: Path, embedder: object) -> None:
    from naturali.service.corpus.documents import Upload

    naturali = build_services(Settings(data_dir=tmp_path), embedder=embedder)  # type: ignore[arg-type]
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    assert owner
    project, _ = naturali.projects.create(owner, "local")
    doc = naturali.documents.create(
        owner, project.id, Upload(b"Refunds take five business days.", path="/refunds.md")
    )
    naturali.close()
    data = ["--data-dir", str(tmp_path), "--local", "--project-id", project.id]
    table = runner.invoke(app, ["search-knowledge", "--query", "refund time", *data])
    assert table.exit_code == 0, table.output
    assert "/refunds.md" in table.output and "why:" not in table.output
    why = runner.invoke(app, ["search-knowledge", "--query", "refund time", "--explain", *data])
    assert "why: vector #1 cos " in why.output and "lexical #1 bm25 " in why.output
    raw = runner.invoke(app, ["search-knowledge", "--document-ids", doc.id, "--json", *data])
    result = json.loads(raw.stdout)["results"][0]
    assert result["document_id"] == doc.id and "similarity_score" not in result  # fetch
    bad = runner.invoke(app, ["search-knowledge", "--query", "x", "--limit", "0", *data])
    assert bad.exit_code != 0


def test_admin_migrate_brings_an_empty_postgres_database_up_to_date(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    """``naturali admin migrate`` runs the migrations alone, once however often it runs."""
    url = postgres.url("postgres").replace("/postgres?", "/migrate_me?", 1)
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute(b"DROP DATABASE IF EXISTS migrate_me")
        conn.execute(b"CREATE DATABASE migrate_me")
    data = ["--data-dir", str(tmp_path), "--database-url", url]
    for _ in range(2):
        result = runner.invoke(app, ["admin", "migrate", *data])
        assert result.exit_code == 0, result.output
    with psycopg.connect(url) as conn:
        versions = conn.execute(b"SELECT version FROM naturali_schema").fetchall()
        tables = {r[0] for r in conn.execute(b"SELECT tablename FROM pg_tables")}
    assert versions == [(n,) for n in range(1, len(MIGRATIONS) + 1)]  # each once
    assert {"chunks", "store_mutations", "store_guards", "ingest_jobs"} <= tables
    assert not (tmp_path / "catalog.sqlite").exists()  # the data dir holds no catalog

"""The bad-input matrix: every operation that writes, fed lone surrogates, NUL and other
control characters, deep nesting and oversized bodies (plus PDF bombs for uploads), answers
4xx with the error shape and leaves the data dir as it was."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from typing import Any

import psycopg
import pytest

from naturali.settings import Settings
from pdfs import BOMB_BYTES, pdf_bomb
from test_authz_matrix import OPERATIONS, World, world  # noqa: F401 (the fixture)

WRITES = sorted(
    (method, path)
    for (method, path), (_, body) in OPERATIONS.items()
    if method in ("post", "put", "patch")
    and not path.endswith(("/search", "/resume", "/sync"))
    and not path.endswith(("/grep", "/lookup", "/records", "/timeline"))
    and "/chronicle/" not in path
)


def fingerprint(settings: Settings) -> str:
    """Files (but SQLite's, whose pages move on reads) by content, and every catalog row
    (in catalog.sqlite, or in the PostgreSQL database)."""
    data_dir = settings.data_dir
    digest = hashlib.sha256()
    for path in sorted(data_dir.rglob("*")):
        if path.is_file() and ".sqlite" not in path.name and path.name != "write.lock":
            digest.update(str(path.relative_to(data_dir)).encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    if settings.database_url is not None:
        return _postgres_rows(settings.database_url, digest)
    with sqlite3.connect(f"file:{data_dir / 'catalog.sqlite'}?mode=ro", uri=True) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if "fts" not in r[0] and r[0] not in NOT_STATE
        ]
        for table in sorted(tables):
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1"):
                if table == "sqlite_sequence" and row[0] in NOT_STATE:
                    continue  # the audit trail's own counter
                digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


# The audit trail records every write, refusals included, by design: a log of requests, not
# the state a refused write must leave unchanged.
NOT_STATE = {"audit"}


def _postgres_rows(url: str, digest: Any) -> str:
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            b"SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
        ).fetchall()
        for (table,) in tables:
            if table in NOT_STATE:
                continue
            for row in conn.execute(f"SELECT * FROM {table} t ORDER BY t::text".encode()):
                digest.update(repr(tuple(row)).encode())
    return str(digest.hexdigest())


def _spoil(body: dict[str, Any], bad: str) -> str:
    """The body as JSON text with ``bad`` (JSON text) appended to its first string value."""
    text = json.dumps(body)
    first = re.search(r'": "([^"]*)"', text)
    assert first is not None
    return text[: first.end(1)] + bad + text[first.end(1) :]


BAD = {
    "lone surrogate": lambda body: _spoil(body, "\\ud800"),
    "lone low surrogate": lambda body: _spoil(body, "\\udfff"),
    "NUL": lambda body: _spoil(body, "\\u0000"),
    "control character": lambda body: _spoil(body, "\\u001b[31m"),
    "deep nesting": lambda body: json.dumps(body)[:-1] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}",
    "oversized body": lambda body: json.dumps({**body, "pad": "x" * (2 * 1024 * 1024)}),
    "not JSON": lambda body: json.dumps(body)[:-1],
}


# Writes whose first string is a document's text: a stray control character there (a build
# log's colours) is read, not refused (tests/test_upload_bounds.py); NUL still is.
TEXT_FIRST = {("put", "/v1/projects/{project_id}/documents/{document_id}")}


@pytest.mark.parametrize("bad", sorted(BAD))
def test_bad_input_changes_nothing(world: World, bad: str) -> None:  # noqa: F811
    settings = world.api.naturali.settings
    before = fingerprint(settings)
    for method, path in WRITES:
        if bad == "control character" and (method, path) in TEXT_FIRST:
            continue
        url = re.sub(r"\{(\w+)\}", lambda m: world.ids()[m.group(1)], path)
        body = OPERATIONS[(method, path)][1](world)
        assert body is not None
        response = world.api.http.request(
            method.upper(),
            url,
            content=BAD[bad](body).encode("utf-8", "surrogatepass"),
            headers={**world.api.headers(), "Content-Type": "application/json"},
        )
        assert 400 <= response.status_code < 500, (bad, method, path, response.text)
        assert set(response.json()) == {"error"}, response.text
        assert set(response.json()["error"]) == {"type", "code", "message", "param"}
    assert fingerprint(settings) == before, bad


def test_chunked_oversized_bodies_and_bombs_change_nothing(world: World) -> None:  # noqa: F811
    settings = world.api.naturali.settings
    before = fingerprint(settings)

    def chunks() -> Any:
        yield b'{"query": "'
        for _ in range(40):
            yield b"a" * 64 * 1024
        yield b'"}'

    for method, path in WRITES:
        url = re.sub(r"\{(\w+)\}", lambda m: world.ids()[m.group(1)], path)
        response = world.api.http.request(
            method.upper(),
            url,
            content=chunks(),
            headers={**world.api.headers(), "Content-Type": "application/json"},
        )
        assert response.status_code == 413, (method, path, response.text)
    bomb = pdf_bomb(BOMB_BYTES)  # past what a parser worker may hold
    for method, url in (
        ("POST", f"/v1/projects/{world.project}/documents"),
        ("PUT", f"/v1/projects/{world.project}/documents/{world.document}"),
    ):
        files = {"file": ("bomb.pdf", bomb)}
        response = world.api.http.request(
            method, url, files=files, data={"path": "/bomb.pdf"}, headers=world.api.headers()
        )
        assert response.status_code == 400, response.text
    assert fingerprint(settings) == before

"""A project's vector leg answered by PostgreSQL itself (pgvector HNSW, retrieval/
stored_vectors.py) once it has ``database_vector_rows`` chunks: the same top results as the
server's own leg, filtered or not, and the server holds none of its vectors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from conftest import Api, validate_result
from naturali.api.app import create_app
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.retrieval.vector_leg import stored_vectors
from naturali.settings import Settings
from naturali.storage.postgres.vectors import index_name
from postgres import PostgresServer

SENTENCES = [
    "Refunds are paid back to the original card within five business days.",
    "The on-call engineer answers pages within fifteen minutes, day or night.",
    "Deploys to production happen on weekdays before four in the afternoon.",
    "The office kitchen stocks green tea, coffee beans and oat milk.",
    "Dogs are welcome in the office on Fridays if they are house-trained.",
    "Expense reports need a receipt for anything above twenty-five euros.",
    "Customer escalations go to the support lead, then to the head of support.",
    "Database backups run every night and are kept for thirty days.",
    "New hires get a laptop, a security key and a buddy for their first month.",
    "Passwords are stored in the team vault, never in chat or email.",
    "The quarterly planning meeting sets each team's three main goals.",
    "Invoices are sent on the first working day of each month.",
]
QUERIES = [
    "how long until my refund arrives",
    "who answers a page at night",
    "can I bring my dog to work",
    "where do I keep passwords",
    "when are backups made",
    "what does a new hire receive",
]


@contextmanager
def _api(tmp_path: Path, embedder: OnnxEmbedder, url: str, stored_from: int) -> Iterator[Api]:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=url,
        database_vector_rows=stored_from,
        index_snapshot_rows=1,
    )
    naturali = build_services(settings, embedder=embedder)
    naturali.bootstrap()
    token = (tmp_path / "token").read_text() if (tmp_path / "token").exists() else None
    try:
        with TestClient(create_app(naturali), raise_server_exceptions=False) as http:
            http.event_hooks["response"].append(validate_result)
            yield Api(http, naturali, token or "")
    finally:
        naturali.close()


def _answers(api: Api, project_id: str, **filters: Any) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        r = api.search(project_id, query=query, include_memories=False, limit=8, **filters)
        assert r.status_code == 200, r.text
        out.append([(h["path"], h["score"]) for h in r.json()["results"]])
    return out


def _same(got: list[list[tuple[str, float]]], held: list[list[tuple[str, float]]]) -> None:
    """The same passages in the same order, their scores within float32 rounding (the
    database sums a cosine's products in another order than numpy, and the fusion's min–max
    stretches what differs: three candidates whose cosines lie ~0.01 apart turn a cosine's
    last bit, ~1e-7, into ~2e-5 of a fused score on an AVX2-only CPU)."""
    for answer, expected in zip(got, held, strict=True):
        assert [p for p, _ in answer] == [p for p, _ in expected]
        assert [s for _, s in answer] == pytest.approx([s for _, s in expected], abs=1e-4)


@pytest.fixture
def project(tmp_path: Path, embedder: OnnxEmbedder, postgres: PostgresServer) -> Iterator[Any]:
    """A project of 72 documents on a fresh database, written by a server holding its own
    vectors; the owner's token is kept for the servers after it."""
    url = postgres.new_database()
    settings = Settings(data_dir=tmp_path / "data", database_url=url)
    naturali = build_services(settings, embedder=embedder)
    token = naturali.bootstrap()
    assert token
    (tmp_path / "token").write_text(token)
    with TestClient(create_app(naturali)) as http:
        api = Api(http, naturali, token)
        project_id = api.project()
        for i in range(72):
            first, second = SENTENCES[i % 12], SENTENCES[(i * 5 + 1) % 12]
            folder = "/kept" if i % 6 == 0 else "/rest"
            api.doc(project_id, f"{folder}/{i}.md", f"# Note {i}\n\n{first} {second}")
    naturali.close()
    yield url, project_id
    postgres.drop(url)


def _wait_for_index(url: str, name: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(300):
            row = conn.execute(
                "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
                "WHERE c.relname = %s",
                (name,),
            ).fetchone()
            if row is not None and row[0]:
                return
            time.sleep(0.1)
    raise AssertionError(f"{name} was not built")


def test_a_project_over_the_size_answers_through_the_database_leg(
    tmp_path: Path, embedder: OnnxEmbedder, project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, project_id = project
    filters: list[dict[str, Any]] = [{}, {"document_paths": ["/kept/"]}]
    with _api(tmp_path, embedder, url, stored_from=0) as api:
        held = [_answers(api, project_id, **f) for f in filters]

    # Every search through the graph (a fixture this small would be read exactly otherwise),
    # and the filter leaving a sixth: the graph is asked for enough rows, or read exactly.
    monkeypatch.setattr(stored_vectors, "EXACT_ROWS", 0)
    monkeypatch.setattr(stored_vectors, "EXACT_SHARE", 0.0)
    with _api(tmp_path, embedder, url, stored_from=50) as api:
        with api.naturali.indexes.synced(project_id) as index:
            assert isinstance(index.stored_vectors, stored_vectors.StoredVectors)
            assert index.vectors.nbytes == 0  # no vector of the project held here
            model_id = index.model_id
        _wait_for_index(url, index_name(project_id, model_id))
        asked: list[int | None] = []
        search = index.stored_vectors._search
        original = search.nearest_vectors

        def spy(*args: Any, **kwargs: Any) -> Any:
            asked.append(None if kwargs.get("within") is None else len(kwargs["within"]))
            return original(*args, **kwargs)

        monkeypatch.setattr(search, "nearest_vectors", spy)
        for f, expected in zip(filters, held, strict=True):
            _same(_answers(api, project_id, **f), expected)
        assert None in asked  # the graph answered
    # Restarted: its snapshot holds no vectors, and the leg is the database's again.
    with _api(tmp_path, embedder, url, stored_from=50) as api:
        for f, expected in zip(filters, held, strict=True):
            _same(_answers(api, project_id, **f), expected)
    # Under the size again (the setting lowered): that snapshot cannot serve; rebuilt.
    with _api(tmp_path, embedder, url, stored_from=0) as api:
        assert [_answers(api, project_id, **f) for f in filters] == held
        with api.naturali.indexes.synced(project_id) as index:
            assert index.stored_vectors is None and index.vectors.nbytes > 0


def test_a_narrow_filter_is_answered_exactly_among_its_rows(
    tmp_path: Path, embedder: OnnxEmbedder, project: Any
) -> None:
    url, project_id = project
    narrow = {"document_paths": ["/kept/0.md", "/kept/6.md", "/kept/12.md"]}
    with _api(tmp_path, embedder, url, stored_from=0) as api:
        held = _answers(api, project_id, **narrow)
    with _api(tmp_path, embedder, url, stored_from=50) as api:
        _same(_answers(api, project_id, **narrow), held)
        assert all(
            {path for path, _ in answer} <= {"/kept/0.md", "/kept/6.md", "/kept/12.md"}
            for answer in held
        )

"""The float32 rows read from a snapshot's file, mapped, rather than held in memory
(retrieval/vector_leg/vectors.py): the same exact top k as rows in memory, rows appended after
the mapping included, and a server's index holds none of a saved snapshot's float32 rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from conftest import Api, open_files, validate_result
from naturali.api.app import create_app
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.retrieval.indexes import snapshot
from naturali.retrieval.vector_leg.vectors import Vectors
from naturali.settings import Settings


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _clustered(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, d))
    return _unit(centres[rng.integers(0, 20, n)] + 0.3 * rng.standard_normal((n, d)))


def _held(matrix: np.ndarray) -> Vectors:
    vectors = Vectors(matrix.shape[1])
    vectors.grow(matrix.shape[0], 0)
    vectors.put(0, matrix)
    return vectors


def test_mapped_rows_and_rows_appended_after_them_give_the_same_top_k(tmp_path: Path) -> None:
    matrix = _clustered(30_000, 64, seed=11)
    saved = 20_000
    path = tmp_path / "exact.npy"
    np.save(path, matrix[:saved])
    mapped = _held(matrix[:saved])
    mapped.adopt(np.load(path, mmap_mode="r"))
    mapped.grow(matrix.shape[0], saved)
    mapped.put(saved, matrix[saved:25_000])
    mapped.put(25_000, matrix[25_000:])
    held = _held(matrix)
    assert mapped.mapped_bytes == saved * 64 * 4
    assert mapped.nbytes == held.nbytes - saved * 64 * 4  # the mapped rows are not held

    rng = np.random.default_rng(5)
    for share in (1.0, 0.3, 0.01):
        mask = rng.random(matrix.shape[0]) < share
        for trial in range(10):
            query = matrix[rng.integers(matrix.shape[0])]
            for k in (1, 10, 50):
                got, expected = mapped.nearest(query, mask, k), held.nearest(query, mask, k)
                assert np.array_equal(got.rows, expected.rows), (share, trial, k)
                assert np.array_equal(got.cosines, expected.cosines)


def _file(tmp_path: Path, rows: np.ndarray) -> np.ndarray:
    path = tmp_path / f"{len(rows)}.npy"
    np.save(path, rows)
    return np.load(path, mmap_mode="r")


def test_a_later_mapping_takes_over_the_rows_held_since_the_first(tmp_path: Path) -> None:
    matrix = _clustered(5_000, 32, seed=3)
    vectors = _held(matrix[:2_000])
    vectors.adopt(_file(tmp_path, matrix[:1_000]))  # as a first snapshot's file
    vectors.grow(5_000, 2_000)
    vectors.put(2_000, matrix[2_000:])
    vectors.adopt(_file(tmp_path, matrix[:4_000]))  # as a later snapshot's file
    assert np.array_equal(vectors.leading(5_000), matrix)
    rows = np.array([0, 999, 1_000, 3_999, 4_000, 4_999])
    assert np.array_equal(vectors.exact(rows), matrix[rows])
    assert vectors.nbytes == 5_000 * (32 + 4) + 1_000 * 32 * 4


DOCS = {
    f"/notes/{i}.md": f"# Note {i}\n\nNote {i} is about {topic}."
    for i, topic in enumerate(
        ["refunds and returns", "on-call escalations", "the kitchen's tea", "office dogs"] * 3
    )
}


def _answers(api: Api, project_id: str) -> list[list[tuple[str, float]]]:
    out = []
    for query in ("how are refunds handled", "who gets escalations", "can I bring my dog"):
        r = api.search(project_id, query=query, include_memories=False)
        assert r.status_code == 200, r.text
        out.append([(h["path"], h["score"]) for h in r.json()["results"]])
    return out


@pytest.fixture
def saving_api(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Any:
    settings = Settings(data_dir=tmp_path / "data", index_snapshot_rows=1, **backend)
    naturali = build_services(settings, embedder=embedder)
    token = naturali.bootstrap()
    assert token
    try:
        with TestClient(create_app(naturali), raise_server_exceptions=False) as http:
            http.event_hooks["response"].append(validate_result)
            yield Api(http, naturali, token)
    finally:
        naturali.close()


def test_a_saved_index_reads_its_float32_rows_from_the_snapshot(
    saving_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "READ_BELOW", 0)  # mapped, as a large project's is
    api = saving_api
    project_id = api.project()
    registry = api.naturali.indexes
    for path, text in DOCS.items():
        api.doc(project_id, path, text)
    # Each write has the unloaded project's snapshot brought up to date in the background:
    # once the last is, the first search maps every row from it.
    assert registry.jobs.idle(timeout=60)
    before = _answers(api, project_id)
    assert registry.jobs.idle(timeout=60)
    with registry.synced(project_id) as index:
        n = index.n
        assert index.vectors.mapped_bytes == n * index.dimension * 4
        assert index.vectors.nbytes == n * (index.dimension + 4)  # codes and offsets alone
    assert _answers(api, project_id) == before
    api.doc(project_id, "/notes/new.md", "# New\n\nRefunds of gift cards are not possible.")
    after = _answers(api, project_id)  # a row held after the mapped ones
    assert any(path == "/notes/new.md" for path, _ in after[0])


def test_a_small_snapshot_is_read_and_held_not_mapped(saving_api: Api) -> None:
    """A mapping keeps its file open while the index is loaded: a small project's snapshot is
    read instead, counted as held, and leaves no descriptor behind."""
    api = saving_api
    project_id = api.project()
    for path, text in DOCS.items():
        api.doc(project_id, path, text)
    before = _answers(api, project_id)
    registry = api.naturali.indexes
    registry.close()  # the snapshot written
    registry.cache.clear()  # as evicted: the next search loads it from the snapshot
    assert _answers(api, project_id) == before
    with registry.synced(project_id) as index:
        assert index.mapped_bytes() == 0
        assert index.vectors.nbytes == index.n * (index.dimension * 4 + index.dimension + 4)
    assert not any(target.endswith("arrays.bin") for target in open_files())

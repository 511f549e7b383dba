"""Vectors record their model; vectors another model made are not compared, and are
re-embedded (`naturali admin reembed`, and on `naturali serve`)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from conftest import Api


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # inspects SQLite files
def test_vectors_of_another_model_are_reembedded(api: Api) -> None:
    project_id = api.project()
    doc = api.doc(project_id, "/a.md", "Refunds are processed within five business days.")
    before = api.search(project_id, query="refund processing time").json()["results"][0]
    assert before["similarity_score"] > 0.3
    db = sqlite3.connect(api.naturali.settings.data_dir / "catalog.sqlite")
    model = db.execute("SELECT model FROM chunks").fetchone()[0]
    assert model == api.naturali.embedder().model_id  # each vector records its model
    db.execute(
        "UPDATE chunks SET model = 'older-model', vector = ?", (np.ones(384, np.float32).tobytes(),)
    )
    db.commit()
    api.naturali.indexes.reset()
    stale = api.search(project_id, query="refund processing time").json()["results"][0]
    assert stale["similarity_score"] == 0.0  # never compared across models
    assert stale["document_id"] == doc["id"]  # the lexical leg still finds it
    assert api.naturali.reembed() == 1
    assert api.naturali.reembed() == 0
    after = api.search(project_id, query="refund processing time").json()["results"][0]
    assert after["similarity_score"] == before["similarity_score"]
    assert after["chunk_id"] == before["chunk_id"]  # citations survive

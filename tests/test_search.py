"""POST /v1/projects/{project_id}/knowledge/search, rule by rule (docs/spec/search-api.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import Request

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.retrieval import fusion
from naturali.text.context import in_context
from naturali.text.tokens import matched_spans, query_term_counts, query_terms

DOCS = {
    "/handbook/support/refunds.md": "Refunds are processed within five business days.",
    "/handbook/support/escalation.md": "The escalation path goes from agent to engineer.",
    "/handbook/engineering/oncall.md": "The on-call engineer answers pages in fifteen minutes.",
    "/handbookish/notes.md": "Unrelated notes about refunds for the sales team.",
}


@pytest.fixture
def corpus(api: Api) -> tuple[Api, str, dict[str, str]]:
    project_id = api.project()
    ids = {}
    for path, text in DOCS.items():
        team = path.split("/")[2] if path.startswith("/handbook/") else "sales"
        ids[path] = api.doc(
            project_id,
            path,
            text,
            tags={"team": team, "lang": "en"},
            metadata={"Owner": team.upper()},
        )["id"]
    return api, project_id, ids


def _results(api: Api, project_id: str, **body: Any) -> list[dict[str, Any]]:
    r = api.search(project_id, **body)
    assert r.status_code == 200, r.text
    assert set(r.json()) == {"results"}
    return list(r.json()["results"])


def test_document_result_has_every_field(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, ids = corpus
    hit = _results(api, project_id, query="how long do refunds take", limit=1)[0]
    assert set(hit) == {
        "source_type",
        "document_id",
        "chunk_id",
        "document_version",
        "page",
        "file_id",
        "project_id",
        "path",
        "filename",
        "size",
        "title",
        "metadata",
        "tags",
        "content",
        "score",
        "similarity_score",
        "created_at",
        "updated_at",
    }
    assert hit["source_type"] == "document"
    assert hit["document_id"] == ids["/handbook/support/refunds.md"]
    assert hit["chunk_id"].startswith("chunk_") and hit["page"] is None
    assert hit["metadata"] == {"Owner": "SUPPORT"} and hit["tags"]["team"] == "support"
    assert hit["filename"] == "refunds.md" and hit["size"] == len(DOCS[hit["path"]])
    assert 0.0 <= hit["similarity_score"] <= 1.0


def test_default_limit_and_bounds(api: Api) -> None:
    project_id = api.project()
    for i in range(12):
        api.doc(project_id, f"/d/{i:02d}.md", f"Document number {i} about shared topics.")
    assert len(_results(api, project_id, query="shared topics")) == 10
    assert len(_results(api, project_id, query="shared topics", limit=3)) == 3
    for bad in (0, 101, -1):
        assert_error(api.search(project_id, query="x", limit=bad), 400)
    assert_error(api.search(project_id, query="x", limit="5"), 400)
    assert_error(api.search(project_id, query="x", limit=5.5), 400)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"limit": 5},
        {"query": ""},
        {"query": "   "},
        {"query": "x" * 2001},
        {"query": 5},
        {"query": "x", "include_documents": False, "include_memories": False},
        {"query": "x", "unknown": 1},
        {"query": "x", "document_paths": "/handbook/"},
        {"query": "x", "document_paths": []},
        {"query": "x", "document_paths": ["relative/"]},
        {"query": "x", "document_ids": [1]},
        {"query": "x", "tags": {"a": 1}},
        {"query": "x", "tags": ["a"]},
        {"query": "x", "min_similarity": "high"},
        {"query": "x", "min_similarity": 2},
        {"query": "x", "include_documents": "yes"},
    ],
)
def test_bad_requests_are_400(
    corpus: tuple[Api, str, dict[str, str]], body: dict[str, Any]
) -> None:
    api, project_id, _ = corpus
    assert_error(api.search(project_id, **body), 400)


def test_body_must_be_json_object(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, _ = corpus
    url = f"/v1/projects/{project_id}/knowledge/search"
    assert_error(api.post(url, content=b"[1]", headers={"Content-Type": "application/json"}), 400)
    assert_error(api.post(url, content=b"{", headers={"Content-Type": "application/json"}), 400)


def test_prefix_semantics(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, _ = corpus
    hits = _results(api, project_id, query="refunds", document_paths=["/handbook/"])
    assert {h["path"] for h in hits} <= {p for p in DOCS if p.startswith("/handbook/")}
    assert "/handbookish/notes.md" not in {h["path"] for h in hits}
    # A prefix without a trailing slash is a plain string prefix.
    loose = _results(api, project_id, query="refunds", document_paths=["/handbook"])
    assert "/handbookish/notes.md" in {h["path"] for h in loose}
    several = _results(
        api,
        project_id,
        query="engineer",
        document_paths=["/handbook/support/", "/handbook/engineering/"],
    )
    assert {h["path"] for h in several} == {p for p in DOCS if p.startswith("/handbook/")}


def test_filters_rank_within_the_subset(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, ids = corpus
    only = ids["/handbook/engineering/oncall.md"]
    hits = _results(api, project_id, query="how long do refunds take", document_ids=[only])
    assert [h["document_id"] for h in hits] == [only]


def test_min_similarity_drops_weak_vectors_but_keeps_lexical_hits(api: Api) -> None:
    project_id = api.project()
    api.doc(project_id, "/a.md", "Quarterly zorblax inventory reconciliation for warehouses.")
    api.doc(project_id, "/b.md", "Our cafeteria serves pancakes on Fridays.")
    unfiltered = _results(api, project_id, query="zorblax")
    sims = {h["path"]: h["similarity_score"] for h in unfiltered}
    assert set(sims) == {"/a.md", "/b.md"}
    floor = max(sims.values()) + 0.01  # above every cosine: only lexical evidence survives
    hits = _results(api, project_id, query="zorblax", min_similarity=min(floor, 1.0))
    assert [h["path"] for h in hits] == ["/a.md"]
    assert hits[0]["similarity_score"] < floor  # raw cosine still reported


def test_similarity_is_raw_cosine_and_score_orders(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, _ = corpus
    hits = _results(api, project_id, query="escalation path")
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert hits[0]["path"] == "/handbook/support/escalation.md"
    embedder = api.naturali.embedder()
    q = embedder.embed_query("escalation path")  # a query's vector: the query model's
    # a passage is embedded in its context: here none, its document's title being only its
    # file's name
    (d,) = embedder.embed([in_context(DOCS["/handbook/support/escalation.md"], "")])
    assert hits[0]["similarity_score"] == pytest.approx(float(q @ d), abs=1e-4)


def test_fetch_mode_order_and_no_similarity(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, ids = corpus
    hits = _results(api, project_id, document_paths=["/handbook/"])
    assert [h["path"] for h in hits] == sorted(p for p in DOCS if p.startswith("/handbook/"))
    assert all("similarity_score" not in h for h in hits)
    by_id = _results(api, project_id, document_ids=[ids["/handbookish/notes.md"]])
    assert [h["path"] for h in by_id] == ["/handbookish/notes.md"]
    assert _results(api, project_id, document_paths=["/handbook/"], limit=2) == hits[:2]


def test_tags_filter_requires_every_pair(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, _ = corpus
    hits = _results(api, project_id, query="refunds", tags={"team": "support", "lang": "en"})
    assert {h["path"] for h in hits} == {
        "/handbook/support/refunds.md",
        "/handbook/support/escalation.md",
    }
    assert _results(api, project_id, query="refunds", tags={"team": "support", "lang": "de"}) == []
    fetched = _results(api, project_id, tags={"team": "sales"})
    assert [h["path"] for h in fetched] == ["/handbookish/notes.md"]


def _memories(api: Api, project_id: str) -> tuple[str, str]:
    base = f"/v1/projects/{project_id}/memory_stores"
    tagged = api.post(base, json={"name": "support-agent", "tags": {"team": "support"}}).json()
    other = api.post(base, json={"name": "sales-agent", "tags": {"team": "sales"}}).json()
    api.post(
        f"{base}/{tagged['id']}/memories",
        json={
            "content": "Customer Acme wants refunds by bank transfer.",
            "tags": {"customer": "acme"},
        },
    )
    api.post(
        f"{base}/{other['id']}/memories",
        json={
            "content": "Customer Globex asked about refunds twice.",
            "tags": {"customer": "globex", "team": "support"},
        },
    )
    return tagged["id"], other["id"]


def test_query_reaches_documents_and_memories(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, _ = corpus
    tagged, _ = _memories(api, project_id)
    hits = _results(api, project_id, query="refunds", limit=20)
    kinds = {h["source_type"] for h in hits}
    assert kinds == {"document", "memory"}
    memory = next(h for h in hits if h["source_type"] == "memory")
    assert set(memory) == {
        "source_type",
        "memory_id",
        "memory_store_id",
        "memory_store_name",
        "content",
        "score",
        "similarity_score",
        "created_at",
        "updated_at",
    }
    only_docs = _results(api, project_id, query="refunds", include_memories=False, limit=20)
    assert {h["source_type"] for h in only_docs} == {"document"}
    only_memories = _results(api, project_id, query="refunds", include_documents=False)
    assert {h["source_type"] for h in only_memories} == {"memory"}
    assert tagged in {h["memory_store_id"] for h in only_memories}


def test_store_filters_narrow_only_their_own_store(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, ids = corpus
    tagged, other = _memories(api, project_id)
    hits = _results(api, project_id, query="refunds", memory_store_ids=[tagged], limit=20)
    assert {h["memory_store_id"] for h in hits if h["source_type"] == "memory"} == {tagged}
    assert any(h["source_type"] == "document" for h in hits)  # documents still take part
    # Without a query a store selector is a fetch of that store only.
    fetched = _results(api, project_id, memory_store_ids=[other])
    assert [h["memory_store_id"] for h in fetched] == [other]
    assert "similarity_score" not in fetched[0]
    # document_ids alone fetch documents only.
    assert {
        h["source_type"]
        for h in _results(api, project_id, document_ids=[ids["/handbook/support/refunds.md"]])
    } == {"document"}


def test_tags_on_store_count_for_memories(corpus: tuple[Api, str, dict[str, str]]) -> None:
    api, project_id, _ = corpus
    tagged, other = _memories(api, project_id)
    hits = _results(
        api, project_id, query="refunds", tags={"team": "support"}, include_documents=False
    )
    # The support store's memory matches by its store's tag; the sales store's memory by its own.
    assert {h["memory_store_id"] for h in hits} == {tagged, other}
    both = _results(
        api,
        project_id,
        query="refunds",
        tags={"team": "support", "customer": "acme"},
        include_documents=False,
    )
    assert {h["memory_store_id"] for h in both} == {tagged}


def test_other_projects_never_change_results(api: Api) -> None:
    mine = api.project("mine")
    api.doc(mine, "/a.md", "Refunds are processed within five business days.")
    api.doc(mine, "/b.md", "Escalations go to the on-call engineer.")
    before = _results(api, mine, query="refunds escalation")
    theirs = api.project("theirs")
    for i in range(15):
        api.doc(theirs, f"/x{i}.md", "refunds refunds escalation " * (i + 1))
    after = _results(api, mine, query="refunds escalation")
    assert [(h["path"], round(h["score"], 6)) for h in after] == [
        (h["path"], round(h["score"], 6)) for h in before
    ]
    assert {h["project_id"] for h in _results(api, theirs, query="refunds", limit=50)} == {theirs}
    _, stranger = api.user("stranger")
    assert_error(api.search(mine, token=stranger, query="refunds"), 404)


def test_query_is_not_stored(api: Api) -> None:
    project_id = api.project()
    api.doc(project_id, "/a.md", "text")
    secret = "supercalifragilistic-query-marker"
    _results(api, project_id, query=secret)
    api.naturali.close()
    data_dir = api.naturali.settings.data_dir
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.fixture
def tight(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    """A server whose index memory budget holds no more than the project being searched."""
    yield from make_api(tmp_path, embedder, backend, index_memory_bytes=1)


def test_the_index_memory_budget_drops_the_least_recently_searched(tight: Api) -> None:
    first, second = tight.project("first"), tight.project("second")
    tight.doc(first, "/a.md", "Refunds are processed within five business days.")
    tight.doc(second, "/b.md", "Escalations go to the on-call engineer.")
    before = _results(tight, first, query="refunds")
    assert list(tight.naturali.indexes.cache.loaded()) == [first]
    _results(tight, second, query="escalations")
    assert list(tight.naturali.indexes.cache.loaded()) == [second]  # the first one was dropped
    assert _results(tight, first, query="refunds") == before  # and reloads on demand
    assert list(tight.naturali.indexes.cache.loaded()) == [first]


def test_explain_shows_each_legs_rank_and_score_only_when_asked(api: Api) -> None:
    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    api.doc(project_id, "/oncall.md", "Escalations go to the on-call engineer.")
    api.doc(project_id, "/tea.md", "The kitchen has green tea and coffee.")
    plain = _results(api, project_id, query="how long do refunds take")
    assert all("explain" not in hit for hit in plain)  # the spec's response, unchanged
    explained = _results(api, project_id, query="how long do refunds take", explain=True)
    assert [h["chunk_id"] for h in explained] == [h["chunk_id"] for h in plain]
    reasons = [h["explain"] for h in explained]
    assert [r["fused"] for r in reasons] == [h["score"] for h in explained]
    assert reasons == sorted(reasons, key=lambda r: -r["fused"])
    top = reasons[0]
    assert explained[0]["path"] == "/refunds.md"
    assert top["lexical_rank"] == 1 and top["bm25"] > 0  # the only document with "refunds"
    assert top["vector_rank"] == 1
    assert abs(top["cosine"] - explained[0]["similarity_score"]) < 1e-6
    # Vector ranks follow the cosines; a passage without the query's words has no lexical rank.
    ranked = sorted((r for r in reasons if r["vector_rank"]), key=lambda r: r["vector_rank"])
    assert [r["cosine"] for r in ranked] == sorted((r["cosine"] for r in ranked), reverse=True)
    tea = next(h["explain"] for h in explained if h["path"] == "/tea.md")
    assert tea["lexical_rank"] is None and tea["bm25"] == 0
    fetched = _results(api, project_id, document_paths=["/"], explain=True)  # fetch mode
    assert all(h["explain"]["vector_rank"] is None and h["explain"]["fused"] == 0 for h in fetched)


def test_explain_marks_whole_query_words_as_the_lexical_leg_tokenised_them(api: Api) -> None:
    project_id = api.project()
    content = "Refunds take five days. The other information — café hours — is in the handbook."
    api.doc(project_id, "/refunds.md", content)
    hit = _results(api, project_id, query="how long do the refunds take at the cafe", explain=True)[
        0
    ]
    spans = hit["explain"]["matches"]
    # Offsets count UTF-16 units; these are all in the Basic Multilingual Plane.
    marked = [(hit["content"][m["start"] : m["end"]], m["term"]) for m in spans]
    assert marked == [("Refunds", "refund"), ("take", "take"), ("café", "cafe")]
    # "the" is a stopword the query dropped: neither "The" nor the "the" in "other" is marked.
    fetched = _results(api, project_id, explain=True, document_paths=["/"])
    assert fetched[0]["explain"]["matches"] == []  # fetch mode: no query, no terms


def test_a_repeated_query_is_embedded_once(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    pool = api.naturali.concurrency.queries
    handed_off: list[str] = []  # a known text is answered at once, not on the query pool

    def submit(fn: Any) -> Any:
        handed_off.append(fn.args[1])  # functools.partial(vector, project_id, text)
        return type(pool).submit(pool, fn)

    monkeypatch.setattr(pool, "submit", submit)
    calls = _embedded_queries(api, monkeypatch)
    first = _results(api, project_id, query="how long do refunds take")
    again = _results(api, project_id, query="how long do refunds take")
    _results(api, project_id, query="how long do refunds take?")
    assert first == again
    assert calls == ["how long do refunds take", "how long do refunds take?"]
    assert handed_off == calls


def test_a_query_another_project_asked_is_embedded_again(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A vector from the cache answers sooner than one the model runs for: shared between
    # projects, a search's speed would tell whether another team had asked the same thing.
    ours, theirs = api.project(), api.project()
    for project_id in (ours, theirs):
        api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    calls = _embedded_queries(api, monkeypatch)
    question = "how long do refunds take"
    answers = [_results(api, p, query=question) for p in (theirs, ours, ours, theirs)]
    assert calls == [question, question]  # once a project, each repeat from its own cache
    assert [r[0]["content"] for r in answers] == [answers[0][0]["content"]] * 4


def _embedded_queries(api: Api, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, each query text the model is run for (the real model still runs)."""
    embedder = api.naturali.embedder()
    calls: list[str] = []
    original = embedder.embed_query

    def counted(text: str) -> Any:
        calls.append(text)
        return original(text)

    monkeypatch.setattr(embedder, "embed_query", counted)
    return calls


def test_the_fused_score_weighs_the_vector_leg_by_the_models_weight(api: Api) -> None:
    """fused = w·minmax(cosine) + (1 − w)·minmax(BM25) over the candidates, where w is the
    embedding model's own ``vector_weight`` (0.7 for bge-small, chosen on SciFact's train
    queries), not equal weights — less 0.4 × the square of how near the best BM25 comes to the
    query's most possible BM25 (``fusion.query_alpha``); the cosines are those of the query fed
    back toward the two best (``fusion.fed_back``), each result's ``fed_back_cosine``."""
    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    api.doc(project_id, "/policy.md", "A refund request: refunds, refund times, refund rules.")
    api.doc(project_id, "/money.md", "Customers get their money back within a week.")
    api.doc(project_id, "/tea.md", "The kitchen has green tea and coffee.")
    hits = _results(api, project_id, query="how long do refunds take", explain=True, limit=10)
    assert len(hits) == 4  # a small project: every chunk is a candidate of the vector leg
    weight = api.naturali.embedder().vector_weight
    assert weight == 0.7

    def minmax(values: list[float]) -> np.ndarray:
        array = np.array(values)
        return (array - array.min()) / (array.max() - array.min())

    fed_back = [h["explain"]["fed_back_cosine"] for h in hits]
    assert not np.allclose(fed_back, [h["explain"]["cosine"] for h in hits], atol=1e-3)
    cosines = minmax(fed_back)
    bm25 = minmax([h["explain"]["bm25"] for h in hits])
    fused = np.array([h["explain"]["fused"] for h in hits])
    terms = query_term_counts("how long do refunds take")
    with api.naturali.indexes.synced(project_id) as index:
        bound = index.lexical.score(terms, index.live_rows, 4).bound
    best = max(h["explain"]["bm25"] for h in hits)
    confidence = best / bound
    alpha = weight - 0.4 * confidence**2
    assert 0.3 < confidence < 1 and np.isclose(fusion.query_alpha(weight, best, bound), alpha)
    assert np.allclose(fused, alpha * cosines + (1 - alpha) * bm25, atol=1e-5)
    assert not np.allclose(fused, weight * cosines + (1 - weight) * bm25, atol=1e-3)


def test_every_search_goes_through_the_routes_dependencies(api: Api) -> None:
    """One entry: a dependency added to the route (a scope check, a rate limit) sees every
    search, whatever its body — a query, a fetch, memories, a repeated text."""
    from naturali.api import deps

    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    store = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": "kb"}).json()
    seen: list[str] = []
    app = api.http.app

    async def counted(request: Request) -> Any:
        seen.append(request.url.path)
        return await deps.service(request)

    app.dependency_overrides[deps.service] = counted  # type: ignore[attr-defined]
    try:
        bodies: list[dict[str, Any]] = [
            {"query": "refund timing"},
            {"query": "refund timing"},  # a repeated text, its vector cached
            {"query": "refund timing", "include_memories": False},
            {"document_paths": ["/"]},
            {"memory_store_ids": [store["id"]]},
            {"query": "refunds", "limit": 1, "explain": True},
        ]
        for body in bodies:
            r = api.post(f"/v1/projects/{project_id}/knowledge/search", json=body)
            assert r.status_code == 200, r.text
    finally:
        app.dependency_overrides.clear()  # type: ignore[attr-defined]
    assert seen == [f"/v1/projects/{project_id}/knowledge/search"] * len(bodies)


def test_match_offsets_count_utf16_units_as_browsers_do() -> None:
    # An emoji is two UTF-16 units: a browser's "😀 refunds".slice(3, 10) is "refunds".
    assert matched_spans("😀 refunds", query_terms("refunds")) == [(3, 10, "refund")]

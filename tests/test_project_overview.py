"""A project at a glance over HTTP, on both backends: folders counted a level a call and
paged, ingestion jobs with their progress, memory stores with their memories, the model and
the server's index."""

from __future__ import annotations

from conftest import Api, assert_error


def _docs(api: Api, project: str, paths: list[str]) -> None:
    for path in paths:
        api.doc(project, path, f"# {path}\n\nNotes about {path}.")


def test_folders_count_documents_and_chunks_at_any_depth(api: Api) -> None:
    project = api.project()
    _docs(api, project, ["/readme.md", "/a/one.md", "/a/b/two.md", "/a/b/c/three.md", "/z%_/x.md"])
    top = api.get(f"/v1/projects/{project}/documents/folders").json()
    assert top["prefix"] == "/" and top["documents_here"] == 1
    assert [(f["path"], f["documents"], f["chunks"]) for f in top["data"]] == [
        ("/a/", 3, 3),
        ("/z%_/", 1, 1),  # % and _ are characters of a path, not patterns
    ]
    inner = api.get(f"/v1/projects/{project}/documents/folders", params={"prefix": "/a/"}).json()
    assert inner["documents_here"] == 1 and [f["path"] for f in inner["data"]] == ["/a/b/"]
    leaf = api.get(f"/v1/projects/{project}/documents/folders", params={"prefix": "/a/b/c/"})
    assert leaf.json() == {
        "prefix": "/a/b/c/",
        "documents_here": 1,
        "data": [],
        "next_cursor": None,
    }


def test_folders_page_by_cursor(api: Api) -> None:
    project = api.project()
    _docs(api, project, ["/top.md"] + [f"/f{i}/doc.md" for i in range(5)])
    url = f"/v1/projects/{project}/documents/folders"
    seen, cursor = [], None
    while True:
        page = api.get(url, params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        assert page["documents_here"] == (1 if cursor is None else 0)
        seen += [f["path"] for f in page["data"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [f"/f{i}/" for i in range(5)]


def test_folders_refuse_a_file_prefix_and_a_bad_cursor(api: Api) -> None:
    project = api.project()
    url = f"/v1/projects/{project}/documents/folders"
    assert_error(api.get(url, params={"prefix": "/a"}), 400, "invalid_path")
    assert_error(api.get(url, params={"prefix": "relative/"}), 400, "invalid_path")
    assert_error(api.get(url, params={"cursor": "nope"}), 400, "invalid_cursor")
    assert_error(api.get(url, params={"limit": 0}), 400)


def _long(sections: int = 30) -> bytes:
    return "\n\n".join(
        f"## Part {n}\n\nRelease {n} is documented step by step." for n in range(sections)
    ).encode()


def test_jobs_list_what_waits_with_its_progress_and_page(api: Api) -> None:
    project = api.project()
    api.naturali.ingestion.close()  # no worker: the uploads wait in their jobs
    ids = []
    for i in range(3):
        r = api.upload(project, f"/ops/guide-{i}.md", _long(), f"guide-{i}.md")
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
    url = f"/v1/projects/{project}/ingest_jobs"
    first = api.get(url, params={"limit": 2}).json()
    rest = api.get(url, params={"limit": 2, "cursor": first["next_cursor"]}).json()
    jobs = first["data"] + rest["data"]
    assert rest["next_cursor"] is None
    assert [j["document_id"] for j in jobs] == ids  # oldest first
    assert [j["path"] for j in jobs] == [f"/ops/guide-{i}.md" for i in range(3)]
    assert all(j["state"] == "queued" and j["chunks_done"] == 0 for j in jobs)
    assert all(j["chunks_total"] == 30 for j in jobs)
    overview = api.get(f"/v1/projects/{project}/overview").json()
    assert overview["ingestion"] == {"queued": 3, "running": 0, "failed": 0}
    assert_error(api.get(url, params={"cursor": "bad"}), 400, "invalid_cursor")


def test_overview_counts_stores_model_and_index(api: Api) -> None:
    project = api.project()
    other = api.project("other")
    _docs(api, project, ["/a.md", "/b/c.md"])
    store = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "agent"}).json()
    empty = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "empty"}).json()
    for text in ("Ada likes tea.", "Ada moved to Lyon."):
        r = api.post(
            f"/v1/projects/{project}/memory_stores/{store['id']}/memories", json={"content": text}
        )
        assert r.status_code == 201, r.text
    before = api.get(f"/v1/projects/{project}/overview").json()
    assert (before["documents"], before["chunks"], before["memories"]) == (2, 4, 2)
    assert {(s["name"], s["memories"]) for s in before["memory_stores"]} == {
        ("agent", 2),
        ("empty", 0),
    } and empty["id"] in {s["id"] for s in before["memory_stores"]}
    embedder = api.naturali.embedder()
    assert before["embedding_model"] == {"id": embedder.model_id, "dimension": embedder.dimension}
    assert before["index"]["loaded"] is False and before["index"]["memory_bytes"] == 0
    api.search(project, query="tea")
    after = api.get(f"/v1/projects/{project}/overview").json()["index"]
    assert after["loaded"] is True and after["rows"] == 4 and after["memory_bytes"] > 0
    assert after["vector_leg"] == "memory" and after["budget_bytes"] > 0
    assert api.get(f"/v1/projects/{other}/overview").json()["index"]["loaded"] is False

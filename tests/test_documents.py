"""Documents over HTTP: create, upload, versions, list, delete, validation, PDFs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, EmbedCall, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.service.corpus.documents import Upload
from pdfs import scanned_pdf, text_pdf


def _count_chunks(api: Api, document: dict[str, Any]) -> int:
    return len(
        api.naturali.storage.owner_chunks(document["project_id"], "document", [document["id"]])
    )


def test_create_from_json_text_keeps_metadata_casing(api: Api) -> None:
    project_id = api.project()
    metadata = {"camelCase": 1, "snake_case": {"Nested-Key": [1, "two"]}, "UPPER": None}
    doc = api.doc(
        project_id,
        "/handbook/support/refunds.md",
        "# Refunds\n\nFive days.",
        metadata=metadata,
        tags={"team": "support"},
    )
    assert doc["id"].startswith("doc_") and doc["version"] == 1
    assert doc["title"] == "Refunds" and doc["filename"] == "refunds.md"
    assert doc["content_type"] == "text/markdown" and doc["chunk_count"] == 1
    got = api.get(f"/v1/projects/{project_id}/documents/{doc['id']}").json()
    assert got["metadata"] == metadata and list(got["metadata"]) == list(metadata)
    assert got["tags"] == {"team": "support"}


def test_a_small_uploads_passages_are_embedded_at_the_searches_priority(
    api: Api, embed_calls: list[EmbedCall]
) -> None:
    """Its answer waits on them: on the passage threads (lower priority) a note waited behind
    a busy server's searches. A bulk ingest's passages still wait their turn."""
    project_id = api.project()
    note = {"path": "/notes/kettle.md", "content": "The kettle descales every Friday."}
    assert api.post(f"/v1/projects/{project_id}/documents", json=note).status_code == 201
    assert embed_calls and all(urgent for _, urgent in embed_calls)
    embed_calls.clear()
    user = api.naturali.auth.authenticate(api.token)
    shelves = [
        Upload(f"Shelf {n} holds atlases.".encode(), f"{n}.md", f"/{n}.md") for n in range(3)
    ]
    assert len(api.naturali.documents.create_many(user, project_id, shelves)) == 3
    assert embed_calls and not any(urgent for _, urgent in embed_calls)


def test_multipart_upload_with_json_fields(api: Api) -> None:
    project_id = api.project()
    r = api.upload(
        project_id,
        "/notes/a.txt",
        b"plain text notes about deploys",
        "a.txt",
        title="Notes",
        metadata=json.dumps({"Source": "wiki"}),
        tags=json.dumps({"kind": "notes"}),
    )
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["title"], body["metadata"], body["tags"]) == (
        "Notes",
        {"Source": "wiki"},
        {"kind": "notes"},
    )
    assert body["content_type"] == "text/plain" and body["size"] == 30
    bad = api.upload(project_id, "/notes/b.txt", b"x", "b.txt", metadata="{oops")
    assert_error(bad, 400, "invalid_json")
    wrong = api.upload(project_id, "/notes/c.txt", b"x", "c.txt", tags=json.dumps({"k": 1}))
    assert_error(wrong, 400, "invalid_tags")
    unknown = api.upload(project_id, "/notes/d.txt", b"x", "d.txt", colour="red")
    assert_error(unknown, 400, "unknown_field")


@pytest.mark.parametrize(
    "path",
    [
        "relative.md",
        "/a/../b.md",
        "/a/./b.md",
        "//a.md",
        "/a//b.md",
        "/a\x00b.md",
        "/a\nb.md",
        "/folder/",
        "/",
        "/" + "x" * 1024,
        "/a\\b.md",
    ],
)
def test_bad_paths_are_400_and_change_nothing(api: Api, path: str) -> None:
    project_id = api.project()
    r = api.post(f"/v1/projects/{project_id}/documents", json={"path": path, "content": "x"})
    assert_error(r, 400, "invalid_path")
    assert api.get(f"/v1/projects/{project_id}/documents").json()["data"] == []


def test_path_clash_is_409(api: Api) -> None:
    project_id = api.project()
    api.doc(project_id, "/a.md", "first")
    r = api.post(f"/v1/projects/{project_id}/documents", json={"path": "/a.md", "content": "x"})
    assert_error(r, 409, "path_taken")


def test_unknown_fields_and_wrong_types_are_400(api: Api) -> None:
    project_id = api.project()
    url = f"/v1/projects/{project_id}/documents"
    assert_error(
        api.post(url, json={"path": "/a.md", "content": "x", "nope": 1}), 400, "unknown_field"
    )
    assert_error(api.post(url, json={"path": "/a.md", "content": 5}), 400)
    assert_error(api.post(url, json={"path": "/a.md", "content": "x", "metadata": [1]}), 400)
    assert_error(api.post(url, json={"path": "/a.md", "content": "x", "tags": {"a": 1}}), 400)
    assert_error(api.post(url, json={"content": "x"}), 400, "missing_field")
    assert_error(api.post(url, content=b"x", headers={"Content-Type": "text/plain"}), 415)


def test_non_utf8_text_is_415(api: Api) -> None:
    project_id = api.project()
    r = api.upload(project_id, "/latin1.txt", "café".encode("latin-1"), "latin1.txt")
    assert_error(r, 415, "invalid_encoding")
    r = api.upload(project_id, "/image.gif", b"GIF89a", "image.gif")
    assert_error(r, 415, "unsupported_file_type")


def test_new_version_replaces_chunks_and_same_content_is_idempotent(api: Api) -> None:
    project_id = api.project()
    doc = api.doc(project_id, "/faq.md", "Refunds take five business days.")
    url = f"/v1/projects/{project_id}/documents/{doc['id']}"
    same = api.put(url, json={"content": "Refunds take five business days."}).json()
    assert same["version"] == 1  # same bytes, same fields: no new version
    v2 = api.put(url, json={"content": "Refunds now take ten business days."}).json()
    assert v2["version"] == 2 and v2["path"] == "/faq.md"
    hits = api.search(project_id, query="refund days").json()["results"]
    assert [h["document_version"] for h in hits] == [2]
    assert "ten business days" in hits[0]["content"]
    assert _count_chunks(api, doc) == 1


def test_update_can_move_but_not_onto_a_taken_path(api: Api) -> None:
    project_id = api.project()
    a = api.doc(project_id, "/a.md", "alpha")
    api.doc(project_id, "/b.md", "beta")
    url = f"/v1/projects/{project_id}/documents/{a['id']}"
    assert_error(api.put(url, json={"path": "/b.md", "content": "alpha 2"}), 409)
    assert api.get(url).json()["version"] == 1
    moved = api.put(url, json={"path": "/c.md", "content": "alpha 2"}).json()
    assert moved["path"] == "/c.md"


def test_list_with_prefix_and_cursor_pagination(api: Api) -> None:
    project_id = api.project()
    paths = [f"/handbook/{i:02d}.md" for i in range(5)] + ["/other/x.md", "/handbookish.md"]
    for path in paths:
        api.doc(project_id, path, f"content of {path}")
    url = f"/v1/projects/{project_id}/documents"
    seen: list[str] = []
    cursor = None
    while True:
        params = {"path_prefix": "/handbook/", "limit": 2} | ({"cursor": cursor} if cursor else {})
        page = api.get(url, params=params).json()
        seen += [d["path"] for d in page["data"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == sorted(p for p in paths if p.startswith("/handbook/"))
    assert_error(api.get(url, params={"cursor": "garbage!"}), 400, "invalid_cursor")
    assert_error(api.get(url, params={"limit": 0}), 400)


def test_delete_removes_from_search(api: Api) -> None:
    project_id = api.project()
    doc = api.doc(project_id, "/gone.md", "ephemeral zebra facts")
    assert api.search(project_id, query="zebra").json()["results"]
    assert api.delete(f"/v1/projects/{project_id}/documents/{doc['id']}").status_code == 200
    assert api.search(project_id, query="zebra").json()["results"] == []
    assert_error(api.get(f"/v1/projects/{project_id}/documents/{doc['id']}"), 404)


def test_multi_page_pdf_chunks_keep_their_page(api: Api) -> None:
    project_id = api.project()
    pages = [
        "Chapter one. The onboarding checklist covers laptops and accounts.",
        "Chapter two. Refunds are processed within five business days.",
        "Chapter three. The escalation path goes from support to engineering.",
    ]
    r = api.upload(project_id, "/manual.pdf", text_pdf(pages, title="Manual"), "manual.pdf")
    assert r.status_code == 201, r.text
    doc = r.json()
    assert doc["content_type"] == "application/pdf" and doc["page_count"] == 3
    assert doc["title"] == "Manual" and doc["chunk_count"] >= 3
    chunks = api.naturali.storage.owner_chunks(doc["project_id"], "document", [doc["id"]])
    assert sorted({c.page for c in chunks}) == [1, 2, 3]
    for chunk in chunks:  # no chunk spans pages
        assert pages[chunk.page - 1].split(".")[0] in chunk.text  # type: ignore[operator]
    hit = api.search(project_id, query="refunds processed", limit=1).json()["results"][0]
    assert hit["page"] == 2 and hit["filename"] == "manual.pdf"


def test_pdf_text_is_read_as_written_and_mojibake_it_carries_undone() -> None:
    """pypdf decodes a WinAnsi font's accents faithfully and so do we (no second decoding);
    a PDF whose producer put UTF-8 bytes in such a font shows "cafÃ©" itself, and is read as
    the "café" it meant (ftfy, in the PDF worker)."""
    from naturali.ingest.extract import extract

    clean = extract(text_pdf(["Café naïve résumé, déjà vu à Zürich."]), "clean.pdf")
    assert clean.pages[0].text == "Café naïve résumé, déjà vu à Zürich."
    broken = "Café naïve résumé".encode().decode("latin-1")  # what such a producer writes
    assert broken == "CafÃ© naÃ¯ve rÃ©sumÃ©"
    repaired = extract(text_pdf([broken]), "broken.pdf")
    assert repaired.pages[0].text == "Café naïve résumé"


def test_pages_with_no_text_even_by_ocr_are_stored_empty_and_say_so(api: Api) -> None:
    project_id = api.project()
    r = api.upload(project_id, "/scan.pdf", scanned_pdf(2), "scan.pdf")
    assert r.status_code == 202, r.text  # its pages without a text layer wait for OCR
    body = api.ready(project_id, r.json()["id"])
    assert body["chunk_count"] == 0 and body["page_count"] == 2
    assert body["reading"]["empty_pages"] == [1, 2] and body["reading"]["ocr_pages"] == []
    assert body["warnings"] == [
        "no_text_layer: the PDF has no text, not even by OCR; it was stored with zero chunks "
        "and is not searchable"
    ]


def test_broken_pdf_is_400(api: Api) -> None:
    project_id = api.project()
    r = api.upload(project_id, "/broken.pdf", b"%PDF-1.4\n garbage", "broken.pdf")
    assert_error(r, 400, "invalid_pdf")
    assert api.get(f"/v1/projects/{project_id}/documents").json()["data"] == []


@pytest.fixture
def small_api(tmp_path: Path, embedder: OnnxEmbedder) -> Iterator[Api]:
    yield from make_api(tmp_path, embedder, max_upload_bytes=1000)


def test_uploads_over_the_limit_are_413(small_api: Api) -> None:
    project_id = small_api.project()
    r = small_api.upload(project_id, "/big.txt", b"a" * 5000, "big.txt")
    assert_error(r, 413)
    r = small_api.post(
        f"/v1/projects/{project_id}/documents", json={"path": "/big.md", "content": "b" * 2000}
    )
    assert_error(r, 413)
    huge = small_api.post(
        f"/v1/projects/{project_id}/documents", json={"path": "/huge.md", "content": "c" * 200_000}
    )
    assert_error(huge, 413)
    assert small_api.get(f"/v1/projects/{project_id}/documents").json()["data"] == []


def test_stored_file_is_content_addressed(api: Api) -> None:
    project_id = api.project()
    doc = api.doc(project_id, "/x.md", "stored bytes")
    files = list((api.naturali.settings.data_dir / "files").iterdir())
    assert len(files) == 1 and files[0].read_bytes() == b"stored bytes"
    assert doc["file_id"] == "file_" + files[0].name[:16]


def test_concurrent_new_versions_one_wins_the_other_conflicts(api: Api) -> None:
    import threading

    from naturali.errors import Conflict
    from naturali.service.corpus.documents import Upload

    project_id = api.project()
    doc = api.doc(project_id, "/race.md", "version one")
    owner = api.naturali.auth.authenticate(api.token)
    documents = api.naturali.documents
    # Both writers build their version from version 1 before either commits.
    current = documents.get(owner, project_id, doc["id"])
    barrier = threading.Barrier(2)
    real_prepare = documents._prepare
    outcomes: list[str] = []

    def prepare(*args: object, **kwargs: object) -> object:
        result = real_prepare(*args, **kwargs)  # type: ignore[arg-type]
        barrier.wait(timeout=30)
        return result

    documents._prepare = prepare  # type: ignore[method-assign]

    def write(text: str) -> None:
        try:
            documents._ingest(project_id, current, Upload(text.encode()))
            outcomes.append("ok")
        except Conflict as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=write, args=(f"version two by {n}",)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok", "version_conflict"]
    final = api.get(f"/v1/projects/{project_id}/documents/{doc['id']}").json()
    assert final["version"] == 2
    assert _count_chunks(api, doc) == 1


def test_a_long_documents_passages_are_read_around_a_hit(api: Api) -> None:
    """More passages than a fetch returns (100): a hit is read in its context, by its chunk."""
    project_id = api.project()
    sections = [f"## Step {n}\n\nTurn valve {n} a quarter clockwise." for n in range(150)]
    sections[120] = "## Step 120\n\nThe boiler's pressure relief valve is tested every spring."
    body = {"path": "/manual.md", "content": "# Manual\n\n" + "\n\n".join(sections)}
    created = api.post(f"/v1/projects/{project_id}/documents", json=body).json()
    doc = api.ready(project_id, created["id"])  # embedded in the background
    base = f"/v1/projects/{project_id}/documents/{doc['id']}/passages"
    first = api.get(base, params={"limit": 10}).json()
    assert first["start"] == 0 and first["total"] == doc["chunk_count"] > 120
    assert [p["ordinal"] for p in first["data"]] == list(range(10))
    hit = api.search(project_id, query="when is the pressure relief valve tested").json()
    chunk = hit["results"][0]
    around = api.get(base, params={"around": chunk["chunk_id"], "limit": 9}).json()
    ids = [p["chunk_id"] for p in around["data"]]
    assert ids[4] == chunk["chunk_id"]  # centred on the hit, its neighbours on each side
    assert around["start"] == around["data"][0]["ordinal"] > 100
    assert "pressure relief valve" in around["data"][4]["content"]
    last = api.get(base, params={"start": around["total"] - 3, "limit": 10}).json()
    assert len(last["data"]) == 3
    assert_error(api.get(base, params={"around": "chk_nope"}), 404, "chunk_not_found")
    assert_error(api.get(base, params={"limit": 500}), 400)
    other = api.get(f"/v1/projects/{project_id}/documents/doc_nope/passages")
    assert_error(other, 404, "document_not_found")


def test_the_wire_document_is_the_domain_document_field_for_field() -> None:
    """``DocumentOut.of`` copies the domain's fields: one it lacks would be dropped in silence."""
    from dataclasses import fields

    from naturali.contracts.resources import DocumentOut
    from naturali.model import Document

    assert set(DocumentOut.model_fields) == {f.name for f in fields(Document)}

"""Scanned pages and images read by OCR (RapidOCR, the ``ocr`` extra) in the background job,
a page a step in the ingest worker: a scan made here by rendering a real text PDF's pages to
images and back into an image-only PDF is found by the same question on the same page as the
original; a screenshot (PNG) by its words; a mixed PDF is OCR'd only where it has no text
layer, and the document and its passages say what was read how."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder
from pdfs import page_images, scanned_copy, text_pdf

PAGES = [
    "Refunds take five business days from the day the parcel arrives back.",
    "The zebra clause: every contract signed after March renews for two years.",
    "Escalations go to the duty manager, who answers within one hour.",
]


@pytest.fixture
def api(tmp_path: Path, embedder: OnnxEmbedder) -> Iterator[Api]:
    yield from make_api(tmp_path, embedder)  # the worker is the same on both backends


def _read(api: Api, project: str, path: str, data: bytes) -> dict[str, Any]:
    """The upload, answered while its pages wait for OCR, then the document once ready."""
    r = api.upload(project, path, data, path.lstrip("/"))
    assert r.status_code == 202, r.text
    queued = r.json()
    assert queued["status"] == "processing" and queued["pages_done"] == 0
    assert queued["pages_total"] == len(queued["reading"]["ocr_pending"]) > 0
    assert queued["warnings"][0].startswith("ocr_pending: page(s) ")
    document = api.ready(project, queued["id"])
    assert document["status"] == "ready", document
    return document


def _top_page(api: Api, project: str, query: str) -> tuple[str, int | None]:
    hit = api.search(project, query=query, limit=1).json()["results"][0]
    return hit["path"], hit["page"]


def test_a_scanned_pdf_is_found_on_the_page_the_original_is(api: Api) -> None:
    original = text_pdf(PAGES)
    project = api.project()
    document = _read(api, project, "/scan.pdf", scanned_copy(original))
    assert document["page_count"] == 3 and document["chunk_count"] >= 3
    assert document["warnings"][0].startswith("ocr: page(s) 1, 2, 3 had no text layer")
    assert document["reading"] == {
        "text_pages": 0,
        "ocr_pages": [1, 2, 3],
        "empty_pages": [],
        "ocr_pending": [],
        "ocr_skipped": [],
    }
    assert _top_page(api, project, "which contracts renew for two years?") == ("/scan.pdf", 2)
    other = api.project("original")
    api.upload(other, "/original.pdf", original, "original.pdf")
    assert _top_page(api, other, "which contracts renew for two years?")[1] == 2


def test_a_screenshot_is_found_by_its_words(api: Api) -> None:
    image = page_images(text_pdf(["Deploys freeze on Fridays after noon, always."]))[0]
    png = io.BytesIO()
    image.save(png, format="PNG")
    project = api.project()
    document = _read(api, project, "/whiteboard.png", png.getvalue())
    assert document["page_count"] == 1 and document["content_type"] == "image/png"
    assert document["reading"]["ocr_pages"] == [1]
    hit = api.search(project, query="when do deploys freeze", limit=1).json()["results"][0]
    assert hit["path"] == "/whiteboard.png" and "Fridays" in hit["content"]


def test_a_mixed_pdf_is_read_by_ocr_only_where_it_has_no_text(api: Api) -> None:
    mixed = scanned_copy(text_pdf(PAGES), keep_text={1, 3})
    project = api.project()
    document = _read(api, project, "/mixed.pdf", mixed)
    assert document["warnings"] == [
        "ocr: page(s) 2 had no text layer and were read by OCR: check a passage from them "
        "before quoting it"
    ]
    assert document["reading"]["text_pages"] == 2 and document["reading"]["ocr_pages"] == [2]
    passages = api.get(f"/v1/projects/{project}/documents/{document['id']}/passages").json()
    assert {p["page"]: p["read_by"] for p in passages["data"]} == {1: "text", 2: "ocr", 3: "text"}
    assert _top_page(api, project, "zebra clause renewal") == ("/mixed.pdf", 2)
    assert _top_page(api, project, "who answers escalations") == ("/mixed.pdf", 3)


def test_a_bulk_ingest_embeds_text_at_once_and_leaves_scans_to_the_job(api: Api) -> None:
    from naturali.service.corpus.documents import Upload

    project = api.project()
    user = api.naturali.auth.authenticate(api.token)
    scan = scanned_copy(text_pdf([PAGES[0]]))
    notes = Upload(b"# Notes\n\nOtters hold hands.", "notes.md", "/notes.md")
    made = api.naturali.documents.create_many(
        user, project, [notes, Upload(scan, "scan.pdf", "/scan.pdf")]
    )
    assert [d.status for d in made] == ["ready", "processing"]
    assert api.ready(project, made[1].id)["reading"]["ocr_pages"] == [1]


def _blank_pdf(pages: int) -> bytes:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument.new()
    for _ in range(pages):
        document.new_page(595, 842)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_blank_pages_are_empty_and_never_read_by_ocr(api: Api) -> None:
    """2,000 blank pages in 250 KB (hours of OCR if each were read) are ready at once."""
    data = _blank_pdf(2000)
    assert len(data) < 300_000
    project = api.project()
    r = api.upload(project, "/blank.pdf", data, "blank.pdf")
    assert r.status_code in (201, 202), r.text
    document = api.ready(project, r.json()["id"], timeout=60)
    assert document["status"] == "ready" and document["chunk_count"] == 0
    reading = document["reading"]
    assert reading["empty_pages"] == list(range(1, 2001)) and reading["ocr_pages"] == []
    assert document["warnings"][0].startswith("no_text_layer: the PDF has no extractable text")
    white = io.BytesIO()
    from PIL import Image

    Image.new("RGB", (800, 600), "white").save(white, format="PNG")
    r = api.upload(project, "/white.png", white.getvalue(), "white.png")
    assert r.status_code in (201, 202), r.text
    assert api.ready(project, r.json()["id"])["reading"]["empty_pages"] == [1]


def test_ocr_stops_at_the_documents_cap_and_lists_the_pages_it_did_not_read(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    for api in make_api(tmp_path, embedder, ocr_document_pages=1, ocr_project_pages_per_hour=2):
        project = api.project()
        document = _read(api, project, "/scan.pdf", scanned_copy(text_pdf(PAGES)))
        assert document["reading"]["ocr_pages"] == [1]
        assert document["reading"]["ocr_skipped"] == [2, 3]
        skipped = [w for w in document["warnings"] if w.startswith("ocr_skipped:")]
        assert skipped and skipped[0].startswith("ocr_skipped: page(s) 2, 3 were not read")
        # The project's hour has one page left: the next scan reads one, lists the rest.
        again = _read(api, project, "/again.pdf", scanned_copy(text_pdf(PAGES[:2])))
        assert again["reading"]["ocr_pages"] == [1] and again["reading"]["ocr_skipped"] == [2]
        third = _read(api, project, "/third.pdf", scanned_copy(text_pdf(PAGES[:1])))
        assert third["reading"]["ocr_skipped"] == [1] and third["chunk_count"] == 0


def test_an_image_is_read_by_its_bytes_and_a_broken_one_refused_in_our_words(api: Api) -> None:
    image = page_images(text_pdf(["Deploys freeze on Fridays after noon, always."]))[0]
    gif = io.BytesIO()
    image.convert("P").save(gif, format="GIF")
    project = api.project()
    document = _read(api, project, "/board.png", gif.getvalue())  # a GIF named .png
    assert document["reading"]["ocr_pages"] == [1]
    hit = api.search(project, query="when do deploys freeze", limit=1).json()["results"][0]
    assert hit["path"] == "/board.png"
    r = api.upload(project, "/junk.png", b"\x89PNG\r\n\x1a\n" + b"junk" * 100, "junk.png")
    error = assert_error(r, 400, "invalid_file")
    assert "object at 0x" not in error["message"] and "BytesIO" not in error["message"]
    assert error["message"].startswith("the image could not be read: it is damaged")
    r = api.upload(project, "/text.png", b"just some words", "text.png")
    assert "named as an image file but is not one" in assert_error(r, 415)["message"]

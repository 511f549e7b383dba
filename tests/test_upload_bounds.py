"""Every upload's cost is bounded by its size, whatever its shape: hostile files built here
(a CSV a header of tens of thousands of columns wide, a megabyte of brackets, a text of one
endless word) read by the real worker, and through the API with nothing stored when refused."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.ingest import isolated
from naturali.ingest.chunk import HEADER_TOKENS, MAX_TOKENS, PIECE_CHARS
from pdfs import text_pdf

MAX_CHUNKS = 20_000
# A chunk's text is its span, plus at most a cut header (HEADER_TOKENS, a few characters a
# piece): a window of pieces of at most PIECE_CHARS each.
CHUNK_CHARS = MAX_TOKENS * PIECE_CHARS


def _read(data: bytes, filename: str) -> isolated.Read:
    return isolated.read(data, filename, "wordpiece", MAX_CHUNKS)


def _stored_chars(read: isolated.Read) -> int:
    return sum(len(d.text) for d in read.drafts)


def test_a_wide_csv_header_is_carried_cut_not_copied_into_every_row() -> None:
    header = ",".join(f"column_{i}" for i in range(40_000))
    rows = "\n".join(f"{i},refund,{i * 3}" for i in range(2_000))
    data = f"{header}\n{rows}\n".encode()
    read = _read(data, "wide.csv")
    # Linear in the upload: the header is a passage once, each row chunk carries its start.
    assert _stored_chars(read) < 3 * len(data)
    carried = [d.text for d in read.drafts if d.text.startswith("column_0,") and "refund" in d.text]
    assert carried, "row chunks lead with the header's first columns"
    assert all(d.text.splitlines()[0].endswith("…") for d in read.drafts if "refund" in d.text)
    assert all(len(d.text.splitlines()[0]) < HEADER_TOKENS * 8 for d in read.drafts[-5:])
    assert any("column_39999" in d.text for d in read.drafts), "every column is searchable"


def test_a_long_row_is_split_into_windows_each_led_by_the_header() -> None:
    data = ("name,notes\n" + "alpha," + " ".join(["refund"] * 3_000) + "\n").encode()
    read = _read(data, "long.csv")
    assert len(read.drafts) > 5
    assert all(d.text.startswith("name,notes\n") for d in read.drafts)


@pytest.mark.parametrize(
    ("filename", "data"),
    [
        ("brackets.json", b"[" * 500_000 + b"]" * 500_000),
        ("one-word.txt", b"x" * 1_000_000),
        ("minified.js", b"a=1;" * 250_000),
    ],
)
def test_text_without_whitespace_is_cut_into_bounded_pieces(filename: str, data: bytes) -> None:
    read = _read(data, filename)
    assert max(len(d.text) for d in read.drafts) <= CHUNK_CHARS
    assert _stored_chars(read) <= 2 * len(data)
    assert "".join(d.text for d in read.drafts[:3]).startswith(data[:300].decode())


def test_stray_control_characters_are_read_and_binary_is_refused() -> None:
    script = b'#!/bin/sh\necho "\x1b[1;31mfailed\x1b[0m"\nprintf "page\\f"\n\x0cSecond page\x07\n'
    read = _read(script, "build.sh")
    text = " ".join(d.text for d in read.drafts)
    assert "failed" in text and "Second page" in text and "\x1b" not in text
    with pytest.raises(Exception, match="binary data"):
        _read(b"\x01\x02\x03\x04" * 100, "blob.txt")


@pytest.fixture
def small_api(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(tmp_path, embedder, backend, max_chunks_per_document=50)


_LARGE_SERVER = """
import json, sys
from naturali.ingest import isolated, limits
held = b"x" * (limits.RETIRE_RSS_BYTES + 64 * 1024 * 1024)  # a server holding many indexes
request = {"filename": "n.md", "counter": "wordpiece", "max_chunks": 10, "ocr_texts": None}
answers = [isolated._POOL.ask(request, b"A note.") for _ in range(2)]
print(json.dumps([a["retire"] for a in answers]))
"""


def test_a_worker_started_by_a_large_server_is_kept_for_the_next_file() -> None:
    """Linux carries a process's peak memory across fork and exec: measured by it, every
    worker of a server above the bound was replaced after each file (~0.2 s idle, seconds
    under load, for every upload)."""
    out = subprocess.run(
        [sys.executable, "-c", _LARGE_SERVER], capture_output=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == [False, False]


def test_a_version_over_the_chunk_limit_is_413_and_nothing_is_stored(small_api: Api) -> None:
    api = small_api
    project = api.project()
    many = "\n\n".join(f"# Section {i}\n\nRefunds take {i} days." for i in range(80))
    r = api.upload(project, "/many.md", many.encode(), "many.md")
    error = assert_error(r, 413, "too_many_chunks")
    assert "max_chunks_per_document" in error["message"] and error["param"] == "file"
    assert api.get(f"/v1/projects/{project}/documents").json()["data"] == []
    assert not list((api.naturali.settings.data_dir / "files").glob("*"))


def test_a_file_whose_bytes_are_another_format_is_415(api: Api) -> None:
    project = api.project()
    pdf = text_pdf(["Refunds take five days."])
    for name in ("report.docx", "notes.md", "data.csv"):
        r = api.upload(project, f"/{name}", pdf, name)
        assert "a PDF file named" in assert_error(r, 415, "file_type_mismatch")["message"]
    assert api.get(f"/v1/projects/{project}/documents").json()["data"] == []
    json_bytes = json.dumps({"refund": "five days"}).encode()
    assert api.upload(project, "/ok.json", json_bytes, "ok.json").status_code == 201


def test_a_150_page_report_is_read_whole_and_cites_its_pages(api: Api) -> None:
    pages = [
        f"Item {p}. Revenue and operating income of segment {p % 7} for the fiscal year. " * 8
        for p in range(150)
    ]
    pages[119] += "The board approved the zebra clause on page one hundred twenty."
    project = api.project()
    r = api.upload(project, "/10-k.pdf", text_pdf(pages, title="Annual report"), "10-k.pdf")
    assert r.status_code == 202, r.text
    document = api.ready(project, r.json()["id"])
    assert document["page_count"] == 150 and document["title"] == "Annual report"
    hits = api.search(project, query="zebra clause approved by the board").json()["results"]
    assert hits[0]["page"] == 120

"""The formats teams keep knowledge in, each made here by the library that writes it, uploaded
through the API, chunked by its structure and found by search with its page (slide) and
title; and the hostile files a ZIP-of-XML format invites, each refused with nothing left."""

from __future__ import annotations

import csv
import io
import time
import zipfile
from collections.abc import Callable
from typing import Any

import docx
import pptx
import pytest
from ebooklib import epub

from conftest import Api, assert_error
from naturali.model import Chunk


def _ingest(api: Api, data: bytes, filename: str) -> tuple[str, dict[str, Any]]:
    """Uploaded and ready (a large file is answered 202 and embedded in the background)."""
    project = api.project()
    r = api.upload(project, f"/kb/{filename}", data, filename)
    assert r.status_code in (201, 202), r.text
    document = dict(r.json())
    deadline = time.monotonic() + 120
    while document["status"] == "processing" and time.monotonic() < deadline:
        time.sleep(0.1)
        document = api.get(f"/v1/projects/{project}/documents/{document['id']}").json()
    assert document["status"] == "ready", document
    return project, document


def _top(api: Api, project: str, query: str) -> dict[str, Any]:
    r = api.search(project, query=query, limit=3)
    assert r.status_code == 200, r.text
    return dict(r.json()["results"][0])


def _chunks(api: Api, document: dict[str, Any]) -> list[Chunk]:
    return api.naturali.storage.owner_chunks(document["project_id"], "document", [document["id"]])


def _word() -> bytes:
    made = docx.Document()
    made.core_properties.title = "Customer policies"
    made.add_heading("Refunds", 1)
    made.add_paragraph("Refunds are paid back to the original card within five working days.")
    made.add_heading("Shipping", 2)
    made.add_paragraph("Parcels over fifty euros ship free of charge across the union.")
    table = made.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Plan", (0, 1): "Seats", (1, 0): "Team", (1, 1): "25"}.items():
        table.cell(row, col).text = text
    out = io.BytesIO()
    made.save(out)
    return out.getvalue()


def test_a_word_document_is_searched_by_section_with_its_own_title(api: Api) -> None:
    project, document = _ingest(api, _word(), "policies.docx")
    assert document["title"] == "Customer policies"
    assert document["content_type"].endswith("wordprocessingml.document")
    hit = _top(api, project, "how long until my refund arrives on the card")
    assert "five working days" in hit["content"] and "Parcels" not in hit["content"]
    assert hit["page"] is None and hit["title"] == "Customer policies"
    assert any("Team | 25" in c.text for c in _chunks(api, document))


def _slides() -> bytes:
    deck = pptx.Presentation()
    topics = [
        ("Quarterly goals", "Grow revenue in the northern region.", "Mention the hiring freeze."),
        (
            "Incident review",
            "The outage lasted forty minutes.",
            "The root cause was a bad DNS TTL.",
        ),
        ("Roadmap", "Ship offline mode in spring.", "Offline mode needs a sync protocol."),
    ]
    for title, body, notes in topics:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def test_a_slide_deck_is_a_page_per_slide_with_its_speaker_notes(api: Api) -> None:
    project, document = _ingest(api, _slides(), "review.pptx")
    assert document["page_count"] == 3
    assert document["title"] == "Quarterly goals"  # no title of its own: the first slide's
    hit = _top(api, project, "how long did the outage last")
    assert hit["page"] == 2 and "forty minutes" in hit["content"]
    notes = _top(api, project, "what was the root cause, the DNS TTL")
    assert notes["page"] == 2 and "Speaker notes" in notes["content"]
    titles = ["Quarterly goals", "Incident review", "Roadmap"]
    for chunk in _chunks(api, document):  # a chunk never spans slides
        assert chunk.page is not None
        assert [t for t in titles if t in chunk.text] in ([], [titles[chunk.page - 1]])


HTML = b"""<!DOCTYPE html><html><head><title>Deploy guide</title>
<style>.x{color:red}</style><script>var tracking = "pixel telemetry beacon";</script></head>
<body><nav>Home | Pricing | Careers sitemap</nav>
<main><h1>Deploying</h1><p>Run the <b>release</b> script from the ops host.</p>
<h2>Rollback</h2><p>To roll back, redeploy the previous tag.</p>
<pre>make release
  TAG=v1.2 ./deploy.sh</pre></main>
<footer>Copyright footer legal</footer></body></html>"""


def test_an_html_page_gives_its_main_text_with_headings_and_code_lines(api: Api) -> None:
    project, document = _ingest(api, HTML, "deploy.html")
    assert document["title"] == "Deploy guide" and document["content_type"] == "text/html"
    hit = _top(api, project, "how do I roll back a deploy")
    assert "previous tag" in hit["content"] and "release script" not in hit["content"]
    text = "\n".join(c.text for c in _chunks(api, document))
    assert "make release\n  TAG=v1.2 ./deploy.sh" in text  # line breaks kept
    for dropped in ("telemetry", "Careers", "footer", "color:red"):
        assert dropped not in text


def _book() -> bytes:
    book = epub.EpubBook()
    book.set_identifier("handbook-1")
    book.set_title("The Field Handbook")
    book.set_language("en")
    chapters = []
    for n, (head, text) in enumerate(
        [("Camp", "Pitch the tent on high ground."), ("Water", "Boil river water for a minute.")]
    ):
        chapter = epub.EpubHtml(title=head, file_name=f"c{n}.xhtml", lang="en")
        chapter.content = f"<h1>{head}</h1><p>{text}</p>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    out = io.BytesIO()
    epub.write_epub(out, book)
    return out.getvalue()


def test_an_epub_is_read_in_reading_order_with_its_title(api: Api) -> None:
    project, document = _ingest(api, _book(), "handbook.epub")
    assert document["title"] == "The Field Handbook"
    hit = _top(api, project, "is river water safe to drink")
    assert "Boil river water" in hit["content"] and "tent" not in hit["content"]


def test_a_spreadsheet_keeps_rows_whole_and_its_header_in_every_chunk(api: Api) -> None:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "answer"])
    for n in range(120):
        writer.writerow(
            [f"How do I reset gadget {n}?", f"Hold button {n} for ten seconds,\nthen wait."]
        )
    project, document = _ingest(api, out.getvalue().encode(), "faq.csv")
    chunks = _chunks(api, document)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.text.startswith("question,answer\n")
        rows = chunk.text.count("How do I reset")
        assert chunk.text.count("then wait.") == rows  # no row cut in two
    hit = _top(api, project, "how do I reset gadget 77")
    assert "gadget 77?" in hit["content"]


SOURCE = '''"""Billing helpers."""

import math


def invoice_total(lines):
    """Sum the invoice lines with tax."""
    subtotal = sum(line.amount for line in lines)

    return round(subtotal * 1.2, 2)


@cache
def exchange_rate(currency):
    return RATES[currency]


class Ledger:
    def post(self, entry):
        self.entries.append(entry)
'''


def test_source_code_is_chunked_on_definitions_never_mid_line(api: Api) -> None:
    project, document = _ingest(api, SOURCE.encode(), "billing.py")
    assert document["content_type"] == "text/x-python"
    starts = [c.text.splitlines()[0] for c in _chunks(api, document)]
    assert "def invoice_total(lines):" in starts and "@cache" in starts
    assert "class Ledger:" in starts
    full = SOURCE.splitlines()
    for chunk in _chunks(api, document):
        assert all(line in full for line in chunk.text.splitlines())  # whole lines only
    hit = _top(api, project, "invoice total with tax")
    assert hit["content"].startswith("def invoice_total")


@pytest.mark.parametrize(
    ("filename", "content", "content_type", "title"),
    [
        ("conf.yaml", "server:\n  port: 8080\n\ncache:\n  ttl: 60\n", "application/yaml", None),
        ("conf.toml", "[server]\nport = 8080\n\n[cache]\nttl = 60\n", "application/toml", None),
        ("conf.json", '{\n  "server": {"port": 8080}\n}\n', "application/json", None),
        ("guide.rst", "Guide\n=====\n\nIntro.\n\nSetup\n~~~~~\n\nRun it.\n", "text/x-rst", "Guide"),
    ],
)
def test_data_and_restructured_text_are_ingested_with_their_type(
    api: Api, filename: str, content: str, content_type: str, title: str | None
) -> None:
    _, document = _ingest(api, content.encode(), filename)
    assert document["content_type"] == content_type
    assert document["title"] == (title or filename.rsplit(".", 1)[0])
    if filename.endswith(".rst"):  # a section per chunk
        assert [c.text.split("\n")[0] for c in _chunks(api, document)] == ["Guide", "Setup"]


# hostile files ------------------------------------------------------------------------------
def _rezip(data: bytes, change: Callable[[str, bytes], bytes], extra: dict[str, bytes]) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made:
        for name in source.namelist():
            made.writestr(name, change(name, source.read(name)))
        for name, content in extra.items():
            made.writestr(name, content)
    return out.getvalue()


def _in_document(declaration: bytes, body: bytes) -> Callable[[str, bytes], bytes]:
    def change(name: str, content: bytes) -> bytes:
        if name != "word/document.xml":
            return content
        head, _, rest = content.partition(b"<w:document")
        return head + declaration + b"<w:document" + rest.replace(b"Refunds are", body, 1)

    return change


def _as_ebcdic_with_entity(name: str, content: bytes) -> bytes:
    if not name.endswith(".xhtml") or b"<html" not in content:
        return content
    chapter = (
        '<?xml version="1.0" encoding="IBM037"?>\n'
        '<!DOCTYPE html [<!ENTITY leak SYSTEM "file:///etc/hostname">]>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&leak;</p></body></html>'
    )
    return chapter.encode("cp037")


def _keep(_name: str, content: bytes) -> bytes:
    return content


SECRET = "/etc/hostname"
ATTACKS = {
    "xxe": (
        "policies.docx",
        lambda: _rezip(
            _word(),
            _in_document(
                f'<!DOCTYPE w:document [<!ENTITY leak SYSTEM "file://{SECRET}">]>'.encode(),
                b"&leak; Refunds are",
            ),
            {},
        ),
        400,
        "unsafe_file",
    ),
    "entity bomb": (
        "policies.docx",
        lambda: _rezip(
            _word(),
            _in_document(
                b'<!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa">'
                + b"".join(
                    f'<!ENTITY {c} "{("&" + p + ";") * 10}">'.encode()
                    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
                )
                + b"]>",
                b"&i; Refunds are",
            ),
            {},
        ),
        400,
        "unsafe_file",
    ),
    "zip bomb": (
        "review.pptx",
        lambda: _rezip(_slides(), _keep, {"ppt/media/fill.bin": b"\0" * (300 * 1024 * 1024)}),
        400,
        "unsafe_file",
    ),
    "entities in a chapter declared as EBCDIC": (
        "handbook.epub",
        lambda: _rezip(_book(), _as_ebcdic_with_entity, {}),
        400,
        "unsafe_file",
    ),
    "path out of the archive": (
        "handbook.epub",
        lambda: _rezip(_book(), _keep, {"../../../tmp/naturali-escape.txt": b"x"}),
        400,
        "unsafe_file",
    ),
    "a text file named .docx": (
        "notes.docx",
        lambda: b"Refunds in five days.",
        415,
        "file_type_mismatch",
    ),
    "a deck named .docx": ("policies.docx", _slides, 400, "invalid_file"),
    "a truncated archive": ("review.pptx", lambda: _slides()[:4000], 400, "invalid_file"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_hostile_file_is_refused_and_leaves_nothing(api: Api, attack: str) -> None:
    filename, make, status, code = ATTACKS[attack]
    data = make()
    project = api.project()
    files = api.naturali.settings.data_dir / "files"
    before = set(files.iterdir()) if files.exists() else set()
    r = api.upload(project, f"/kb/{filename}", data, filename)
    error = assert_error(r, status, code)
    assert error["param"] == "file"
    assert api.get(f"/v1/projects/{project}/documents").json()["data"] == []
    assert (set(files.iterdir()) if files.exists() else set()) == before
    assert api.search(project, query="refunds").json()["results"] == []


def _titled_pdf(metadata: str | None, heading_size: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    if metadata:
        pdf.set_title(metadata)
    pdf.add_page()
    pdf.set_font("helvetica", style="B", size=heading_size)
    pdf.multi_cell(0, 12, "Acme Corporation Annual Report 2025", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 6, "Revenue grew in every segment. " * 20)
    return bytes(pdf.output())


@pytest.mark.parametrize(
    ("metadata", "size", "title"),
    [
        ("Microsoft Word - F20_10K.docx", 24, "Acme Corporation Annual Report 2025"),
        ("0000066740-19-000010", 24, "Acme Corporation Annual Report 2025"),
        (None, 24, "Acme Corporation Annual Report 2025"),
        ("Annual report of Acme", 24, "Annual report of Acme"),  # a title that names it stays
        ("Document", 11, None),  # nothing stands out on the page: no title rather than noise
    ],
)
def test_a_pdf_whose_metadata_title_names_nothing_takes_its_first_pages(
    metadata: str | None, size: int, title: str | None
) -> None:
    from naturali.ingest.extract import extract

    assert extract(_titled_pdf(metadata, size), "report.pdf").title == title

"""PDF, page by page, with PDFium (``pypdfium2``: Chrome's PDF engine, ~15× less CPU than a
pure-Python reader on a 160-page annual report). Each page's text layer in reading order; the
pages without one (scans) are named, and each is rendered and read by OCR (``ocr_page``,
ingest/ocr.py) later, one page a call, in the background job — never a page that has a text
layer, nor one that is blank (rendered small, nothing on it: an empty page, not a scan). Each
page's lines with their type (pdf_lines.py) are laid out into headings, paragraphs and tables
(pdf_layout.py). The title a filing's cover page states, else the document's metadata's, or
its first page's largest type when the metadata's names nothing (pdf_title.py).
The page count raises the worker's CPU budget (``limits.allow_pages``), so a long report is
read whole and a small file that draws forever is still stopped."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import pypdfium2 as pdfium

from naturali.ingest import limits, ocr
from naturali.ingest.formats import FormatError, LaidOut, Pages, pdf_title
from naturali.ingest.formats.pdf_layout import MAX_LEVEL, Outline, laid_out
from naturali.ingest.formats.pdf_lines import page_lines

MAX_PAGES = 10_000
MAX_BOOKMARKS = 10_000  # an outline read no further (PDFium's own walk stops cycles)
OCR_SCALE = 2.0  # 144 dpi: an A4 page 1,190 × 1,684 pixels, what PP-OCR reads well
BLANK_SCALE = 0.5  # 36 dpi: ~0.1 ms a page to tell a blank page from a scan
# Fewer characters than this on a page is no text layer (a stray page number of a scan).
TEXT_LAYER_CHARS = 3


def read(data: bytes) -> tuple[Pages, str | None, list[int]]:
    """The pages, each laid out with the headings and tables it shows (a scan's empty), the
    title, and the pages that have no text layer."""
    with _opened(data) as document:
        count = len(document)
        if count > MAX_PAGES:
            raise FormatError("pdf_limit_reached", f"the PDF has more than {MAX_PAGES} pages")
        limits.allow_pages(count)
        lines = [page_lines(document, number) for number in range(1, count + 1)]
        laid = laid_out(lines, _outline(document))
        scans = [
            n
            for n, page in enumerate(laid, start=1)
            if not _has_text(page.text) and not _blank(document, n)
        ]
        pages: Pages = [(n, "" if n in scans else p) for n, p in enumerate(laid, start=1)]
        title = pdf_title.cover_title(laid[0].text, _prominent(laid[0])) if laid else None
        title = title or document.get_metadata_dict(skip_empty=True).get("Title")
        if pdf_title.names_nothing(title):
            title = pdf_title.first_page_title(document)
    return pages, title or None, scans


def ocr_page(data: bytes, number: int) -> str:
    """Page ``number``'s text, read by OCR from the page rendered at 144 dpi."""
    with _opened(data) as document:
        if not 1 <= number <= len(document):
            raise FormatError("invalid_pdf", f"the PDF has no page {number}")
        page = document[number - 1]
        try:
            bitmap = page.render(scale=OCR_SCALE)
            try:
                return ocr.read(bitmap.to_numpy()[:, :, :3].copy())
            finally:
                bitmap.close()
        finally:
            page.close()


@contextmanager
def _opened(data: bytes) -> Iterator[pdfium.PdfDocument]:
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    try:
        yield document
    except pdfium.PdfiumError as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    finally:
        document.close()


def _prominent(page: LaidOut) -> list[str]:
    """A page's headings, outermost first."""
    return [h.title for h in sorted(page.headings, key=lambda h: h.level)]


def _outline(document: pdfium.PdfDocument) -> Outline:
    """The bookmarks that point at a page: (level from 1, title, page number)."""
    outline: Outline = []
    for bookmark in itertools.islice(document.get_toc(), MAX_BOOKMARKS):
        if bookmark.level >= MAX_LEVEL:
            continue
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if index is not None and bookmark.get_title().strip():
            outline.append((bookmark.level + 1, bookmark.get_title(), index + 1))
    return outline


def _blank(document: pdfium.PdfDocument, number: int) -> bool:
    page = document[number - 1]
    try:
        bitmap = page.render(scale=BLANK_SCALE, grayscale=True)
        try:
            return ocr.blank(bitmap.to_numpy())
        finally:
            bitmap.close()
    finally:
        page.close()


def _has_text(text: str) -> bool:
    return len(text.strip()) >= TEXT_LAYER_CHARS

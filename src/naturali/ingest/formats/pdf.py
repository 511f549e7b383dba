"""PDF, page by page, with PDFium (``pypdfium2``: Chrome's PDF engine, ~15× less CPU than a
pure-Python reader on a 160-page annual report). Each page's text layer in reading order; the
pages without one (scans) are named, and each is rendered and read by OCR (``ocr_page``,
ingest/ocr.py) later, one page a call, in the background job — never a page that has a text
layer, nor one that is blank (rendered small, nothing on it: an empty page, not a scan). The
title from the document's metadata, or from its first page's largest type when the metadata's
names nothing (ingest/formats/pdf_title.py).
The page count raises the worker's CPU budget (``limits.allow_pages``), so a long report is
read whole and a small file that draws forever is still stopped."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pypdfium2 as pdfium
from ftfy import fix_encoding

from naturali.ingest import limits, ocr
from naturali.ingest.formats import FormatError, Pages, pdf_title

MAX_PAGES = 10_000
OCR_SCALE = 2.0  # 144 dpi: an A4 page 1,190 × 1,684 pixels, what PP-OCR reads well
BLANK_SCALE = 0.5  # 36 dpi: ~0.1 ms a page to tell a blank page from a scan
# Fewer characters than this on a page is no text layer (a stray page number of a scan).
TEXT_LAYER_CHARS = 3


def read(data: bytes) -> tuple[Pages, str | None, list[int]]:
    """The pages (a scan's empty), the title, and the pages that have no text layer."""
    with _opened(data) as document:
        count = len(document)
        if count > MAX_PAGES:
            raise FormatError("pdf_limit_reached", f"the PDF has more than {MAX_PAGES} pages")
        limits.allow_pages(count)
        texts = [_page_text(document, number) for number in range(1, count + 1)]
        scans = [
            n
            for n, text in enumerate(texts, start=1)
            if not _has_text(text) and not _blank(document, n)
        ]
        pages: Pages = [(n, "" if n in scans else t) for n, t in enumerate(texts, start=1)]
        title = document.get_metadata_dict(skip_empty=True).get("Title")
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


def _page_text(document: pdfium.PdfDocument, number: int) -> str:
    page = document[number - 1]
    try:
        textpage = page.get_textpage()
        try:
            return _repaired(textpage.get_text_bounded())
        finally:
            textpage.close()
    finally:
        page.close()


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


def _repaired(text: str) -> str:
    """A PDF written by a tool that put UTF-8 bytes into a single-byte (WinAnsi) font carries
    mojibake itself ("lÃªers" for "lêers"). ftfy undoes that when it is sure, and leaves other
    text alone."""
    return fix_encoding(text)

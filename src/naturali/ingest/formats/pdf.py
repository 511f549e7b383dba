"""PDF, page by page, with PDFium (``pypdfium2``: Chrome's PDF engine, ~15× less CPU than a
pure-Python reader on a 160-page annual report). Each page's text layer in reading order;
the title from the document's metadata. The page count raises the worker's CPU budget
(``limits.allow_pages``), so a long report is read whole and a small file that draws forever
is still stopped."""

from __future__ import annotations

import pypdfium2 as pdfium
from ftfy import fix_encoding

from naturali.ingest import limits
from naturali.ingest.formats import FormatError, Pages

MAX_PAGES = 10_000


def read(data: bytes) -> tuple[Pages, str | None]:
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    try:
        count = len(document)
        if count > MAX_PAGES:
            raise FormatError("pdf_limit_reached", f"the PDF has more than {MAX_PAGES} pages")
        limits.allow_pages(count)
        pages: Pages = [(number, _page_text(document, number)) for number in range(1, count + 1)]
        title = document.get_metadata_dict(skip_empty=True).get("Title")
    except pdfium.PdfiumError as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    finally:
        document.close()
    return pages, title or None


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


def _repaired(text: str) -> str:
    """A PDF written by a tool that put UTF-8 bytes into a single-byte (WinAnsi) font carries
    mojibake itself ("lÃªers" for "lêers"). ftfy undoes that when it is sure, and leaves other
    text alone."""
    return fix_encoding(text)

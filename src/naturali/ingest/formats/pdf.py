"""PDF, page by page, with PDFium (``pypdfium2``: Chrome's PDF engine, ~15× less CPU than a
pure-Python reader on a 160-page annual report). Each page's text layer in reading order;
a page without one (a scan) is rendered and read by OCR (ingest/ocr.py) when the ``ocr``
extra is installed, and never a page that has one. The title from the document's metadata.
The page count raises the worker's CPU budget (``limits.allow_pages``), so a long report is
read whole and a small file that draws forever is still stopped."""

from __future__ import annotations

import pypdfium2 as pdfium
from ftfy import fix_encoding

from naturali.ingest import limits, ocr
from naturali.ingest.formats import FormatError, Pages

MAX_PAGES = 10_000
OCR_SCALE = 2.0  # 144 dpi: an A4 page 1,190 × 1,684 pixels, what PP-OCR reads well
# Fewer characters than this on a page is no text layer (a stray page number of a scan).
TEXT_LAYER_CHARS = 3


def read(data: bytes) -> tuple[Pages, str | None, list[str]]:
    """The pages, the title, and what was read how (the pages OCR read, or could not)."""
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    try:
        count = len(document)
        if count > MAX_PAGES:
            raise FormatError("pdf_limit_reached", f"the PDF has more than {MAX_PAGES} pages")
        limits.allow_pages(count)
        texts = [_page_text(document, number) for number in range(1, count + 1)]
        scans = [n for n, text in enumerate(texts, start=1) if not _has_text(text)]
        if ocr.available():
            for number in scans:
                texts[number - 1] = _ocr(document, number)
            scans = [n for n in scans if _has_text(texts[n - 1])]  # OCR found text on these
        pages: Pages = list(enumerate(texts, start=1))
        title = document.get_metadata_dict(skip_empty=True).get("Title")
    except pdfium.PdfiumError as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    finally:
        document.close()
    return pages, title or None, _notes(scans, count)


def _notes(scans: list[int], count: int) -> list[str]:
    if not scans or len(scans) == count and not ocr.available():
        return []  # a PDF of no text at all is said so by extract.py
    listed = ", ".join(str(n) for n in scans[:20]) + (" …" if len(scans) > 20 else "")
    if ocr.available():
        return [
            f"ocr: page(s) {listed} had no text layer and were read by OCR: check a "
            "passage from them before quoting it"
        ]
    return [
        f"no_text_layer: page(s) {listed} have no text layer and are not searchable; "
        f"{ocr.EXTRA} reads scanned pages"
    ]


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


def _has_text(text: str) -> bool:
    return len(text.strip()) >= TEXT_LAYER_CHARS


def _ocr(document: pdfium.PdfDocument, number: int) -> str:
    page = document[number - 1]
    try:
        bitmap = page.render(scale=OCR_SCALE)
        try:
            return ocr.read(bitmap.to_numpy()[:, :, :3].copy())
        finally:
            bitmap.close()
    finally:
        page.close()


def _repaired(text: str) -> str:
    """A PDF written by a tool that put UTF-8 bytes into a single-byte (WinAnsi) font carries
    mojibake itself ("lÃªers" for "lêers"). ftfy undoes that when it is sure, and leaves other
    text alone."""
    return fix_encoding(text)

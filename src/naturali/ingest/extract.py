"""Turn uploaded bytes into text: Markdown and plain text as UTF-8, PDF page by page."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from naturali.errors import InvalidRequest, UnsupportedMediaType
from naturali.ingest import pdf

PAGE_SEPARATOR = "\n\f\n"
_TEXT_SUFFIXES = {".md", ".markdown", ".mdown", ".txt", ".text", ""}
_MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown"}
# Text keeps tabs, line and page breaks; NUL, escapes and other C0 controls mean binary data.
_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Page:
    number: int | None  # 1-indexed for PDFs, None for text
    text: str
    offset: int  # where this page starts in the document's extracted text


@dataclass
class Extracted:
    content_type: str
    pages: list[Page]
    title: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def page_count(self) -> int | None:
        return len(self.pages) if self.content_type == "application/pdf" else None


def extract(data: bytes, filename: str) -> Extracted:
    suffix = PurePosixPath(filename).suffix.lower()
    if data.startswith(b"%PDF-") or suffix == ".pdf":
        return _extract_pdf(data)
    if suffix not in _TEXT_SUFFIXES and suffix not in {".rst", ".csv", ".json", ".yaml", ".yml"}:
        raise UnsupportedMediaType(
            f"unsupported file type {suffix!r}: naturali ingests Markdown, plain text and PDF",
            code="unsupported_file_type",
            param="file",
        )
    text = decode_text(data)
    content_type = "text/markdown" if suffix in _MARKDOWN_SUFFIXES else "text/plain"
    title = _markdown_title(text) if content_type == "text/markdown" else None
    return Extracted(content_type, [Page(None, text, 0)], title)


def decode_text(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedMediaType(
            f"the file is not valid UTF-8 text (byte {exc.start}); "
            "send Markdown or plain text in UTF-8, or a PDF",
            code="invalid_encoding",
            param="file",
        ) from exc
    control = _BINARY.search(text)
    if control:
        raise UnsupportedMediaType(
            f"the file contains control character U+{ord(control.group()):04X} and is not text",
            code="invalid_encoding",
            param="file",
        )
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _markdown_title(text: str) -> str | None:
    match = re.search(r"^#\s+(.+?)\s*#*\s*$", text, flags=re.MULTILINE)
    return match.group(1).strip() if match else None


def _extract_pdf(data: bytes) -> Extracted:
    try:
        read = pdf.read(data)
    except pdf.PdfError as exc:
        raise InvalidRequest(str(exc), code=exc.code, param="file") from exc
    raw_pages, title = read.pages, read.title
    pages: list[Page] = []
    offset = 0
    for number, text in enumerate(raw_pages, start=1):
        text = text.replace("\r\n", "\n").replace("\x00", "")
        pages.append(Page(number, text, offset))
        offset += len(text) + len(PAGE_SEPARATOR)
    warnings: list[str] = []
    if not any(p.text.strip() for p in pages):
        warnings.append(
            "no_text_layer: the PDF has no extractable text (scanned?); "
            "it was stored with zero chunks and is not searchable"
        )
    return Extracted("application/pdf", pages, title, warnings)


def full_text(extracted: Extracted) -> str:
    return PAGE_SEPARATOR.join(p.text for p in extracted.pages)

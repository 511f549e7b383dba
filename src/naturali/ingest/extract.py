"""Turn uploaded bytes into pages of text: text formats decoded here as UTF-8; PDF, Word,
PowerPoint, EPUB and HTML parsed in the isolated worker (isolated.py). Which format a file is
comes from its name and is checked against its bytes: a file that lies about its type is
refused, never handed to a parser that was not made for it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from naturali.contracts.formats import FORMATS, Format, Layout
from naturali.errors import InvalidRequest, UnsupportedMediaType
from naturali.ingest import isolated

PAGE_SEPARATOR = "\n\f\n"
# Text keeps tabs, line and page breaks; NUL, escapes and other C0 controls mean binary data.
_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_ZIP = b"PK\x03\x04"


_ZIPPED = {"docx", "pptx", "epub"}
_NAMES = {"docx": "Word", "pptx": "PowerPoint", "epub": "EPUB"}


@dataclass(frozen=True)
class Page:
    number: int | None  # 1-indexed page (PDF) or slide (PowerPoint), None otherwise
    text: str
    offset: int  # where this page starts in the document's extracted text


@dataclass
class Extracted:
    content_type: str
    pages: list[Page]
    title: str | None = None
    warnings: list[str] = field(default_factory=list)
    layout: Layout = "prose"

    @property
    def page_count(self) -> int | None:
        numbered = any(p.number is not None for p in self.pages)
        return len(self.pages) if numbered or self.content_type == "application/pdf" else None


def extract(data: bytes, filename: str) -> Extracted:
    suffix = PurePosixPath(filename).suffix.lower()
    if data.startswith(b"%PDF-"):
        suffix = ".pdf"  # a PDF under any name is read as the PDF it is
    form = FORMATS.get(suffix)
    if form is None:
        raise UnsupportedMediaType(
            f"unsupported file type {suffix!r}: naturali ingests "
            "Markdown, text, reStructuredText, PDF, Word (.docx), PowerPoint (.pptx), HTML, "
            "EPUB, CSV/TSV, JSON/YAML/TOML/XML and source code",
            code="unsupported_file_type",
            param="file",
        )
    if form.parsed is not None:
        return _parsed(data, form)
    text = decode_text(data)
    return Extracted(form.content_type, [Page(None, text, 0)], _title(text, form), [], form.layout)


def decode_text(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedMediaType(
            f"the file is not valid UTF-8 text (byte {exc.start}); "
            "send text in UTF-8, or a file of a format naturali parses",
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


def _title(text: str, form: Format) -> str | None:
    if form.content_type == "text/markdown":
        match = re.search(r"^#\s+(.+?)\s*#*\s*$", text, flags=re.MULTILINE)
        return match.group(1).strip() if match else None
    if form.content_type == "text/x-rst":
        # The first line underlined by punctuation at least as long as itself.
        for match in re.finditer(r"^(\S[^\n]*)\n([=\-~^\"'`:+*#])\2*[ \t]*$", text, re.MULTILINE):
            if len(match.group(0).splitlines()[1].rstrip()) >= len(match.group(1).rstrip()):
                return match.group(1).strip()
    return None


def _parsed(data: bytes, form: Format) -> Extracted:
    kind = form.parsed
    assert kind is not None
    if kind in _ZIPPED and not data.startswith(_ZIP):
        raise UnsupportedMediaType(
            f"the file is named as a {_NAMES[kind]} file but is not one (it is not a ZIP "
            "archive); send it under its own type",
            code="file_type_mismatch",
            param="file",
        )
    try:
        read = isolated.parse(kind, data)
    except isolated.ParseError as exc:
        raise InvalidRequest(str(exc), code=exc.code, param="file") from exc
    pages: list[Page] = []
    offset = 0
    for raw in read.pages:
        text = raw.text.replace("\r\n", "\n").replace("\x00", "")
        pages.append(Page(raw.number, text, offset))
        offset += len(text) + len(PAGE_SEPARATOR)
    warnings: list[str] = []
    if not any(p.text.strip() for p in pages):
        what = "the PDF has no extractable text (scanned?)" if kind == "pdf" else "no text"
        warnings.append(
            f"no_text_layer: {what}; it was stored with zero chunks and is not searchable"
        )
    return Extracted(form.content_type, pages, read.title, warnings, form.layout)


def full_text(extracted: Extracted) -> str:
    return PAGE_SEPARATOR.join(p.text for p in extracted.pages)

"""Turn uploaded bytes into pages of text, inside the ingest worker (worker.py) where its CPU
and memory are bounded: text formats decoded as UTF-8, PDF, Word, PowerPoint, EPUB and HTML
by their readers (formats/). Which format a file is comes from its name and is checked
against its bytes: a file whose bytes are another format than its name says (a PDF named
``.docx``, a Word file named ``.md``) is refused, never handed to a parser that was not made
for it."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from naturali.contracts.formats import FORMATS, Format, Layout
from naturali.errors import InvalidRequest, UnsupportedMediaType
from naturali.ingest import ocr
from naturali.ingest.formats import FormatError, Heading, LaidOut, Table
from naturali.ingest.reading import Reading

PAGE_SEPARATOR = "\n\f\n"
# A terminal's colour and cursor sequences (a build log, a shell script's echo): dropped.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])")
# Other C0 controls in text are strays kept as spaces; NUL, or many of them, mean binary data.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BINARY_SHARE = 0.01
_MAGIC = {
    b"%PDF-": "pdf",
    b"PK\x03\x04": "zip",
    b"\x89PNG\r\n\x1a\n": "image",
    b"\xff\xd8\xff": "image",  # JPEG
    b"II*\x00": "image",  # TIFF, little- and big-endian
    b"MM\x00*": "image",
    b"GIF87a": "image",  # read by its bytes whatever image suffix it carries
    b"GIF89a": "image",
}
NO_TEXT = "no_text: the file holds no text; it was stored with zero chunks and is not searchable"
_ZIPPED = {"docx", "pptx", "epub"}
_PAGED = {"pdf", "image"}  # readers that name their pages without a text layer
_NAMES = {
    "docx": "Word",
    "pptx": "PowerPoint",
    "epub": "EPUB",
    "pdf": "PDF",
    "zip": "ZIP",
    "image": "image",
}


@dataclass(frozen=True)
class Page:
    number: int | None  # 1-indexed page (PDF) or slide (PowerPoint), None otherwise
    text: str
    offset: int  # where this page starts in the document's extracted text
    # What the page's layout shows (a PDF's type), at offsets of ``text``; a format whose
    # text says its own structure (Markdown headings) has none.
    headings: tuple[Heading, ...] = ()
    tables: tuple[Table, ...] = ()


@dataclass
class Extracted:
    content_type: str
    pages: list[Page]
    title: str | None = None
    warnings: list[str] = field(default_factory=list)
    layout: Layout = "prose"
    reading: Reading | None = None  # a PDF's or an image's pages, read how

    @property
    def page_count(self) -> int | None:
        numbered = any(p.number is not None for p in self.pages)
        return len(self.pages) if numbered or self.content_type == "application/pdf" else None


def extract(
    data: bytes, filename: str, ocr_texts: dict[int, str | None] | None = None
) -> Extracted:
    """The file's pages; ``ocr_texts``, the text OCR read on its pages without a text layer
    (None: not read yet; a page's None: left unread by the OCR budget)."""
    suffix = PurePosixPath(filename).suffix.lower()
    form = FORMATS.get(suffix)
    if form is None:
        raise UnsupportedMediaType(
            f"unsupported file type {suffix!r}: naturali ingests "
            "Markdown, text, reStructuredText, PDF, Word (.docx), PowerPoint (.pptx), HTML, "
            "EPUB, CSV/TSV, JSON/YAML/TOML/XML, source code and images (PNG, JPEG, TIFF, "
            "WebP)",
            code="unsupported_file_type",
            param="file",
        )
    _check_bytes(data, form, suffix)
    if form.parsed == "image" and not ocr.available():
        raise UnsupportedMediaType(
            f"an image is read by OCR, which this server does not have ({ocr.EXTRA})",
            code="ocr_not_installed",
            param="file",
        )
    if form.parsed is not None:
        return _parsed(data, form, ocr_texts)
    text = decode_text(data)
    warnings = [] if text.strip() else [NO_TEXT]
    page = Page(None, text, 0)
    return Extracted(form.content_type, [page], _title(text, form), warnings, form.layout)


def _check_bytes(data: bytes, form: Format, suffix: str) -> None:
    """A file whose bytes say it is a PDF or a ZIP archive is one; a name saying otherwise is
    refused (and a ZIP-based format whose bytes are no archive)."""
    found = next((kind for magic, kind in _MAGIC.items() if data.startswith(magic)), None)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        found = "image"
    expected = "zip" if form.parsed in _ZIPPED else form.parsed
    if found == expected or (found is None and expected not in ("zip", "pdf", "image")):
        return
    if found is None:
        name = _NAMES[form.parsed or "zip"]
        what = f"named as {'an' if name[0] in 'AEIOUaeiou' else 'a'} {name} file but is not one"
    else:
        what = f"a {_NAMES[found]} file named {suffix or 'without a suffix'}"
    raise UnsupportedMediaType(
        f"the file is {what}; send it under its own type",
        code="file_type_mismatch",
        param="file",
    )


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
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    strays = len(_CONTROL.findall(text))
    if "\x00" in text or strays > max(8, len(text) * _BINARY_SHARE):
        control = _CONTROL.search(text)
        assert control is not None
        raise UnsupportedMediaType(
            f"the file contains control characters (U+{ord(control.group()):04X}) and is "
            "binary data, not text",
            code="invalid_encoding",
            param="file",
        )
    # A form feed ends a page in a printed listing: a paragraph break here.
    return _CONTROL.sub(" ", text.replace("\f", "\n\n"))


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


def _parsed(data: bytes, form: Format, ocr_texts: dict[int, str | None] | None) -> Extracted:
    kind = form.parsed
    assert kind is not None
    with _read_errors(kind):
        read, title, *scanned = _reader(kind).read(data)  # a paged reader names its scans
    scans: list[int] = list(scanned[0]) if scanned else []
    given = ocr_texts or {}
    pages: list[Page] = []
    offset = 0
    for number, page in read:
        laid = page if isinstance(page, LaidOut) else LaidOut(page)
        raw = (given.get(number) or laid.text) if number in scans else laid.text
        text = raw.replace("\r\n", "\n").replace("\x00", "")
        marks = laid if text == laid.text else LaidOut(text)  # at offsets of the reader's text
        pages.append(Page(number, text, offset, marks.headings, marks.tables))
        offset += len(text) + len(PAGE_SEPARATOR)
    texts = [(p.number, p.text) for p in pages]
    reading = Reading.of(texts, scans, ocr_texts) if kind in _PAGED else None
    what = {"pdf": "the PDF", "image": "the image"}.get(kind, "the file")
    warnings = (reading or Reading.of(texts, [], {})).warnings(scans, what)
    return Extracted(form.content_type, pages, title or None, warnings, form.layout, reading)


def ocr_page(data: bytes, filename: str, number: int) -> str:
    """Page ``number`` of a paged file read by OCR (one page a call: the background job's
    progress, and each page's own CPU budget)."""
    kind = FORMATS[PurePosixPath(filename).suffix.lower()].parsed
    assert kind in _PAGED
    with _read_errors(kind):
        return str(_reader(kind).ocr_page(data, number))


def _reader(kind: str) -> Any:
    return importlib.import_module(f"naturali.ingest.formats.{kind}")


@contextmanager
def _read_errors(kind: str) -> Iterator[None]:
    """A reader's failures as the request's errors (a library's own, on a malformed file,
    included)."""
    try:
        yield
    except FormatError as exc:
        raise InvalidRequest(str(exc), code=exc.code, param="file") from exc
    except RecursionError as exc:
        raise InvalidRequest(
            f"the {kind} file is nested too deeply to read", code=_invalid(kind), param="file"
        ) from exc
    except (MemoryError, InvalidRequest, UnsupportedMediaType):
        raise
    except Exception as exc:  # a library's own error on a malformed file
        raise InvalidRequest(
            f"the {kind} file could not be read: {exc}", code=_invalid(kind), param="file"
        ) from exc


def _invalid(kind: str) -> str:
    return "invalid_pdf" if kind == "pdf" else "invalid_file"


def full_text(extracted: Extracted) -> str:
    return PAGE_SEPARATOR.join(p.text for p in extracted.pages)

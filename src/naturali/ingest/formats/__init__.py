"""Readers of the formats parsed in the isolated worker: each module's ``read(data)`` returns
``(pages, title)``, pages as ``(number, text)`` — or ``(number, LaidOut)``, the text with the
headings and tables its layout shows. Structure is written as Markdown (``#`` headings,
blank lines between blocks, fenced code) where the format says it outright, so one chunker
keeps each chunk inside its section whatever the format; a PDF's, read from its type, is
marked beside its text (formats/pdf_layout.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Heading:
    """A heading a reader found by the page's layout (a PDF's type), at offsets of its page."""

    start: int
    end: int
    level: int
    title: str
    # A minor heading (a bold line in the body's type): it starts no passage of its own while
    # the passage before it is short, so a run of small sections is read together.
    minor: bool = False


@dataclass(frozen=True)
class Table:
    """A table's rows on a page from ``start`` (its first row under no header of its own) to
    ``end``, and the header a passage starting among them is read under."""

    start: int
    end: int
    header: str


@dataclass(frozen=True)
class LaidOut:
    """A page's text and what its layout shows of it."""

    text: str
    headings: tuple[Heading, ...] = ()
    tables: tuple[Table, ...] = ()


@dataclass(frozen=True)
class Rows:
    """A table as its format states it: the rows that head its columns, then its rows."""

    header: list[str]
    rows: list[str]


Pages = list[tuple[int | None, str | LaidOut]]


class FormatError(Exception):
    """A file refused for a reason its code names (invalid_file, unsafe_file, …)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def heading(level: int, text: str) -> str:
    return "#" * max(1, min(level, 6)) + " " + " ".join(text.split())


def blocks(parts: list[str]) -> str:
    """Blocks of text, one blank line between them, empty ones dropped."""
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def laid(parts: Sequence[str | Rows]) -> LaidOut:
    """Blocks of text and tables, one blank line between them, each table's rows marked with
    its header (a table whose header is all it has is a block of text)."""
    texts: list[str] = []
    tables: list[Table] = []
    offset = 0
    for part in parts:
        header = _lines(part.header) if isinstance(part, Rows) else ""
        rows = _lines(part.rows) if isinstance(part, Rows) else ""
        text = "\n".join(t for t in (header, rows) if t) if isinstance(part, Rows) else part.strip()
        if not text:
            continue
        start = offset + (2 if texts else 0)
        texts.append(text)
        offset = start + len(text)
        if header and rows:
            tables.append(Table(start + len(header) + 1, offset, header))
    return LaidOut("\n\n".join(texts), tables=tuple(tables))


def _lines(rows: list[str]) -> str:
    return "\n".join(r.strip() for r in rows if r.strip())

"""Word (.docx) with python-docx: paragraphs in order, headings (the Heading and Title
styles) as Markdown headings, tables row by row under their first row, which heads every
passage of their rows; the title from the core properties, else the first heading."""

from __future__ import annotations

import io
import re

import docx
from docx.document import Document
from docx.table import Table
from docx.text.paragraph import Paragraph

from naturali.ingest.formats import Pages, Rows, heading, laid
from naturali.ingest.formats.archive import open_archive

_HEADING = re.compile(r"^Heading (\d)$")


def read(data: bytes) -> tuple[Pages, str | None]:
    open_archive(data, "Word", required="word/document.xml", dtd_allowed=False)
    document = docx.Document(io.BytesIO(data))
    parts: list[str | Rows] = []
    first_heading: str | None = None
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            parts.append(_table(item))
            continue
        text = _paragraph(item)
        if first_heading is None and text.startswith("#"):
            first_heading = text.lstrip("#").strip()
        parts.append(text)
    return [(None, laid(parts))], _title(document) or first_heading


def _paragraph(paragraph: Paragraph) -> str:
    text = paragraph.text.strip()
    style = paragraph.style.name if paragraph.style is not None else ""
    level = _HEADING.match(style or "")
    if text and level:
        return heading(int(level.group(1)), text)
    if text and style == "Title":
        return heading(1, text)
    return text


def _table(table: Table) -> Rows:
    rows = [" | ".join(" ".join(cell.text.split()) for cell in row.cells) for row in table.rows]
    return Rows(rows[:1], rows[1:])


def _title(document: Document) -> str | None:
    title = (document.core_properties.title or "").strip()
    return title or None

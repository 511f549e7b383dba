"""PowerPoint (.pptx) with python-pptx: each slide a page (its 1-based number), its title as a
heading, then the text of its shapes (tables row by row, groups opened) and its speaker notes;
the title from the core properties, else the first slide's title."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.shapes.base import BaseShape
from pptx.slide import Slide

from naturali.ingest.formats import LaidOut, Pages, Rows, heading, laid
from naturali.ingest.formats.archive import open_archive


def read(data: bytes) -> tuple[Pages, str | None]:
    open_archive(data, "PowerPoint", required="ppt/presentation.xml", dtd_allowed=False)
    presentation = pptx.Presentation(io.BytesIO(data))
    pages: Pages = []
    first_title: str | None = None
    for number, slide in enumerate(presentation.slides, start=1):
        title = _slide_title(slide)
        first_title = first_title or title
        pages.append((number, _slide_text(slide, title)))
    own = (presentation.core_properties.title or "").strip()
    return pages, own or first_title


def _slide_title(slide: Slide) -> str | None:
    shape = slide.shapes.title
    text = shape.text_frame.text.strip() if shape is not None and shape.has_text_frame else ""
    return " ".join(text.split()) or None


def _slide_text(slide: Slide, title: str | None) -> LaidOut:
    title_id = slide.shapes.title.shape_id if slide.shapes.title is not None else None
    parts: list[str | Rows] = [heading(2, title)] if title else []
    parts += [t for s in slide.shapes if s.shape_id != title_id for t in _texts(s)]
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            parts += ["Speaker notes:", notes.text]
    return laid(parts)


def _texts(shape: BaseShape) -> Iterator[str | Rows]:
    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        for inner in shape.shapes:  # type: ignore[attr-defined]
            yield from _texts(inner)
    elif getattr(shape, "has_table", False):
        table = shape.table  # type: ignore[attr-defined]
        rows = [" | ".join(c.text.strip() for c in row.cells) for row in table.rows]
        yield Rows(rows[:1], rows[1:])  # the first row heads every passage of the others
    elif shape.has_text_frame:
        yield shape.text_frame.text  # type: ignore[attr-defined]

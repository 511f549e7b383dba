"""EPUB with ebooklib: the documents of the reading order (the spine), each read as HTML
(formats/html.py) and kept whole in its own section; the title from the book's metadata."""

from __future__ import annotations

import io

import ebooklib
from ebooklib import epub

from naturali.ingest.formats import Pages, blocks
from naturali.ingest.formats.archive import open_archive
from naturali.ingest.formats.html import html_text, parse


def read(data: bytes) -> tuple[Pages, str | None]:
    # EPUB 2 documents declare the XHTML DTD by name, so a DTD is allowed; entities are not.
    open_archive(data, "EPUB", required="META-INF/container.xml", dtd_allowed=True)
    book = epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    parts: list[str] = []
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        if item is not None and item.get_type() == ebooklib.ITEM_DOCUMENT:
            parts.append(html_text(parse(item.get_content()))[0])
    titles = book.get_metadata("DC", "title")
    title = " ".join(str(titles[0][0]).split()) if titles else None
    return [(None, blocks(parts))], title

"""The headings a passage sits under, read page by page as a document is chunked: a heading
closes every open one of its level or deeper, and a section goes on over the next page."""

from __future__ import annotations

import re

from naturali.contracts.formats import Layout
from naturali.ingest.formats import Heading
from naturali.text.context import SEPARATOR

ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
Block = tuple[int, int, int]  # start, end, what it is (chunk.HEADING, chunk.MINOR or 0)


class Sections:
    """The headings read so far, and which of them a span sits under: a heading closes every
    open one of its level or deeper (ATX by its ``#``s; setext ``=`` over ``-``; in
    reStructuredText each underline character a level, in the order they first appear)."""

    def __init__(self) -> None:
        self._open: list[tuple[int, str]] = []  # level, text
        self._page: list[tuple[int, int, int, str]] = []  # start, end, level, text: this page's
        self._text = ""  # this page's
        self._next = 0
        self._rst_levels: dict[str, int] = {}

    def read(self, text: str, blocks: list[Block], layout: Layout) -> None:
        self._text = text
        for start, end, heading in blocks:
            if heading:
                level, title = self._heading(text[start:end], layout)
                if title:
                    self._page.append((start, end, level, title))

    def mark(self, text: str, headings: tuple[Heading, ...]) -> None:
        """The page's headings as its reader found them (a PDF's type)."""
        self._text = text
        self._page.extend((h.start, h.end, h.level, h.title) for h in headings)

    def above(self, start: int, end: int) -> str:
        """The open headings at ``start`` of this page, outermost first, less those closed by
        the headings the span up to ``end`` opens with (a statement's page opening with its
        company's name in small type, then its own name, is not under the one before it)."""
        while self._next < len(self._page) and self._page[self._next][0] < start:
            _, _, level, title = self._page[self._next]
            while self._open and self._open[-1][0] >= level:
                self._open.pop()
            self._open.append((level, title))
            self._next += 1
        open_, at = self._open, start
        for heading_start, heading_end, opens, _ in self._page[self._next :]:
            if heading_start >= end or self._text[at:heading_start].strip():
                break
            open_, at = [(level, title) for level, title in open_ if level < opens], heading_end
        return SEPARATOR.join(title for _, title in open_)

    def turn_page(self) -> None:
        """Open this page's headings still unread: the next page's first passage sits under
        them."""
        last = self._page[-1][0] + 1 if self._page else 0
        self.above(last, last)
        self._page, self._next = [], 0

    def _heading(self, block: str, layout: Layout) -> tuple[int, str]:
        lines = block.splitlines()
        first = lines[0].strip()
        if ATX.match(lines[0]):
            hashes = len(first) - len(first.lstrip("#"))
            return hashes, first.strip("#").strip()
        underline = lines[-1].strip()[:1] if len(lines) > 1 else "="
        if layout == "rst":
            level = self._rst_levels.setdefault(underline, len(self._rst_levels) + 1)
            return level, first
        return (1 if underline == "=" else 2), first

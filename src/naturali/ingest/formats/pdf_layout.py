"""A PDF's structure read from its own layout, never from the characters of its text (a
footnote that starts with "#" is a footnote): the headings its author set in larger or bold
type, numbered as a filing's "Item 7." or named in its outline (bookmarks); the lines printed
on every page (a running header, a page number), kept out; paragraphs where the lines open a
gap; and tables — runs of rows that end in figures — with the lines that head their columns
("(Millions) 2018 2017 2016"), which a table that goes on over the next page carries there.

Each page becomes its text (blocks one blank line apart) and its marks: where each heading is
and its level, and where each table's rows are with the header every passage of them is read
under (ingest/chunk.py)."""

from __future__ import annotations

import re
from collections import Counter

from naturali.ingest.formats import Heading, LaidOut, Table
from naturali.ingest.formats.pdf_lines import Line, body_type, line_pitch

# Larger type than the body's by this much is a heading's, larger first; then at the body's
# size a filing's numbered parts ("PART II", then "Item 7."), then other bold lines.
LARGER = 1.15
SIZE_LEVELS = 2
MAX_LEVEL = 6
HEADING_WORDS = 14
HEADING_CHARS = 120
MERGED_CHARS = 200  # a heading set over several lines, joined
# A line printed at the same place (first or last lines) on this share of pages, at least
# three, is a running header or footer.
RUNNING_SHARE = 0.4
RUNNING_LINES = 2
# A gap this many times the page's usual line pitch ends a paragraph.
PARAGRAPH_GAP = 1.45
# A table's header: at most this many lines above its first row, each this short.
HEADER_LINES = 8
HEADER_LINE_CHARS = 80
LABEL_CHARS = 100  # a row's label without figures (a section of a statement) inside a table
LABEL_RUN = 3

# A filing's or a contract's numbered parts, outermost first, each followed by its name.
_NUMBERED = (
    re.compile(r"(?:PART|Part|ARTICLE|Article)\s+(?:[IVX]+|\d+)\b[.:]?(?:\s+[A-Z“\"(]|$)"),
    re.compile(r"(?:ITEM|Item|NOTE|Note|SECTION|Section)\s+\d+[A-Z]?[.:]?(?:\s+[A-Z“\"(]|$)"),
)
_FIGURE = re.compile(r"\(?[-–—−]?\$?\d[\d,]*(?:\.\d+)?%?\)?%?|[-–—−]+|n/?m|N/?M")
_CURRENCY = {"$", "%", "€", "£", "¥", "(", ")"}
_YEAR = re.compile(r"(?:19|20)\d\d")


Outline = list[tuple[int, str, int]]  # level (1: outermost), title, page number


def laid_out(pages: list[list[Line]], outline: Outline) -> list[LaidOut]:
    """Each page's text and marks."""
    body_size, body_weight = body_type(pages)
    running = _running(pages)
    kept = [_unframed(lines, running) for lines in pages]
    levels = _Levels(kept, body_size, body_weight, outline)
    out: list[LaidOut] = []
    carried = ""  # the header of a table the last page ended in
    for number, lines in enumerate(kept, start=1):
        page = _Page(levels.of_page(number, lines), line_pitch(lines), levels)
        out.append(page.laid_out(carried))
        carried = page.open_header
    return out


def _key(line: Line) -> str:
    return re.sub(r"\d+", "#", line.text.casefold())


def _unframed(lines: list[Line], running: set[str]) -> list[Line]:
    """A page without the running lines among its first and last lines."""
    first = 0
    while first < min(RUNNING_LINES, len(lines)) and _key(lines[first]) in running:
        first += 1
    last = len(lines)
    while last > max(first, len(lines) - RUNNING_LINES) and _key(lines[last - 1]) in running:
        last -= 1
    return lines[first:last]


def _running(pages: list[list[Line]]) -> set[str]:
    """Lines printed among the first or last lines of many pages (digits read as one)."""
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for lines in pages:
        ends = lines[:RUNNING_LINES] + lines[-RUNNING_LINES:]
        seen.update({_key(line) for line in ends if not is_row(line.text)})  # a table goes on
    least = max(3, RUNNING_SHARE * len(pages))
    return {key for key, n in seen.items() if n >= least}


def figures(text: str) -> int:
    """How many figures end the line ($, % and parentheses apart)."""
    trailing = 0
    for word in reversed([w for w in text.split() if w not in _CURRENCY]):
        if not _FIGURE.fullmatch(word):
            break
        trailing += 1
    return trailing


def is_row(text: str) -> bool:
    """A table's row: a line that ends in two figures or more."""
    return figures(text) >= 2


class _Levels:
    """Which lines are headings, and at which level: the outline's titles at its levels, then
    larger sizes, larger first, then bold or numbered lines at the body's size."""

    def __init__(
        self, pages: list[list[Line]], body_size: float, body_weight: int, outline: Outline
    ) -> None:
        self.body_size, self.body_weight = body_size, body_weight
        self.outline: dict[int, list[tuple[int, str]]] = {}
        for level, title, number in outline:
            self.outline.setdefault(number, []).append((level, _folded(title)))
        depth = max((level for level, _, _ in outline), default=0)
        sizes = sorted(
            {round(line.size * 2) / 2 for lines in pages for line in lines if self._larger(line)},
            reverse=True,
        )
        sizes = sizes[:SIZE_LEVELS]  # any smaller larger size shares the last one's level
        self.size_levels = {size: depth + i + 1 for i, size in enumerate(sizes)}
        self.body_level = depth + len(sizes) + 1
        self.minor_level = self.body_level + len(_NUMBERED)  # bold lines: minor headings

    def of_page(self, number: int, lines: list[Line]) -> list[tuple[Line, int]]:
        """The page's lines, each with its heading level (0: not a heading)."""
        marked = self.outline.get(number, [])
        return [(line, self._level(line, marked)) for line in lines]

    def _level(self, line: Line, marked: list[tuple[int, str]]) -> int:
        folded = _folded(line.text)
        for level, title in marked:
            if folded and (title == folded or (title.startswith(folded) and len(folded) > 8)):
                return level
        if not _heading_shaped(line.text):
            return 0
        if self._larger(line):
            return self.size_levels.get(round(line.size * 2) / 2, self.body_level - 1)
        if line.size < self.body_size * 0.9:
            return 0
        for rank, numbered in enumerate(_NUMBERED):
            if numbered.match(line.text):
                return min(self.body_level + rank, MAX_LEVEL)
        bold = (line.weight - self.body_weight >= 150 if self.body_weight > 0 else line.heavy) or (
            line.heavy and line.weight >= self.body_weight
        )
        if bold and not line.text.endswith("."):
            return min(self.minor_level, MAX_LEVEL)
        return 0

    def _larger(self, line: Line) -> bool:
        return self.body_size > 0 and line.size >= self.body_size * LARGER


def _heading_shaped(text: str) -> bool:
    words = text.split()
    return (
        sum(c.isalpha() for c in text) >= 2
        and len(words) <= HEADING_WORDS
        and len(text) <= HEADING_CHARS
        and text[-1] not in ",;"
        and not is_row(text)
    )


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


class _Page:
    """One page's lines into blocks: headings (a heading's lines joined), tables, paragraphs."""

    def __init__(self, lines: list[tuple[Line, int]], pitch: float, levels: _Levels) -> None:
        self.lines = lines
        self.pitch = pitch
        self.levels = levels
        self.open_header = ""
        self.parts: list[str] = []
        self.length = 0  # of the blocks so far, joined
        self.after_table = 0  # the first line after the last table: no header of the next

    def laid_out(self, carried: str) -> LaidOut:
        headings: list[Heading] = []
        tables: list[Table] = []

        i = 0
        ends_in_table = False
        while i < len(self.lines):
            line, level = self.lines[i]
            ends_in_table = False
            if level and not self._inside_table(i):
                j = self._heading_end(i)
                texts = [line.text for line, _ in self.lines[i:j]]
                start, end = self._add(texts)
                title = " ".join(texts)[:MERGED_CHARS]
                minor = level >= self.levels.minor_level
                headings.append(Heading(start, end, level, title, minor))
            elif is_row(line.text) and self._table_end(i) - i >= 2:
                j = self._table_end(i)
                above = self._above(i)
                header = above + ([line.text] if _column_header(line.text) else [])
                start, end = self._add(above + [line.text for line, _ in self.lines[i:j]])
                rows = start + sum(len(h) + 1 for h in header)
                given = "\n".join(header) or (carried if not tables else "")
                tables.append(Table(min(rows, end), end, given))
                self.after_table = j
                ends_in_table = True
            else:
                j = self._paragraph_end(i)
                self._add([line.text for line, _ in self.lines[i:j]])
            i, carried = j, ""
        self.open_header = tables[-1].header if ends_in_table else ""
        return LaidOut("\n\n".join(self.parts), tuple(headings), tuple(tables))

    def _add(self, block: list[str]) -> tuple[int, int]:
        """A block's offsets on the page, once added."""
        start = self.length + 2 if self.parts else 0
        self.parts.append("\n".join(block))
        self.length = start + len(self.parts[-1])
        return start, self.length

    def _above(self, i: int) -> list[str]:
        """The short lines above a table's first row back to a heading, a sentence or the
        table before: its caption or the names of its columns (a column's date set over
        three lines, "December 2," "2016"), taken from the paragraphs they closed."""
        k = i
        while k > self.after_table and i - k < HEADER_LINES:
            line, level = self.lines[k - 1]
            if level or len(line.text) > HEADER_LINE_CHARS or line.text.endswith("."):
                break
            k -= 1
        above = [line.text for line, _ in self.lines[k:i]]
        if above and self._tail(len(above)) == above:
            self._drop(len(above))
            return above
        return []

    def _tail(self, count: int) -> list[str]:
        """The last ``count`` lines of the page's blocks so far."""
        lines: list[str] = []
        for part in reversed(self.parts):
            lines[:0] = part.split("\n")
            if len(lines) >= count:
                break
        return lines[-count:]

    def _drop(self, count: int) -> None:
        """Take the last ``count`` lines off the page's blocks."""
        while count:
            last = self.parts.pop()
            self.length -= len(last) + (2 if self.parts else 0)
            lines = last.split("\n")
            if len(lines) > count:
                self._add(lines[:-count])
            count = max(0, count - len(lines))

    def _inside_table(self, i: int) -> bool:
        """A bold line between rows is a statement's section ("Cash Flows from Investing
        Activities"), not a heading of the page (one in larger type or the outline is)."""
        before = i > 0 and is_row(self.lines[i - 1][0].text)
        return before and self.lines[i][1] >= self.levels.body_level and self._row_within(i + 1)

    def _row_within(self, i: int) -> bool:
        for line, _ in self.lines[i : i + LABEL_RUN]:
            if is_row(line.text):
                return True
            if len(line.text) > LABEL_CHARS:
                return False
        return False

    def _heading_end(self, i: int) -> int:
        level = self.lines[i][1]
        j = i + 1
        while j < len(self.lines) and self.lines[j][1] == level and not self._gap(j):
            j += 1
        return j

    def _table_end(self, i: int) -> int:
        j = i + 1
        while j < len(self.lines):
            line, level = self.lines[j]
            row = figures(line.text) >= 1
            label = len(line.text) <= LABEL_CHARS and self._row_within(j + 1)
            if not (row or label) or (level and not label):
                break
            j += 1
        return j

    def _paragraph_end(self, i: int) -> int:
        j = i + 1
        while j < len(self.lines):
            line, level = self.lines[j]
            if self._gap(j) or level or (is_row(line.text) and self._table_end(j) - j >= 2):
                break
            j += 1
        return j

    def _gap(self, j: int) -> bool:
        above, line = self.lines[j - 1][0], self.lines[j][0]
        if not self.pitch or not line.size:
            return False
        drop = above.bottom - line.bottom
        return drop > self.pitch * PARAGRAPH_GAP or drop < -self.pitch


def _column_header(text: str) -> bool:
    """A first row whose figures are years names the table's columns ("2025 2024", or "At
    December 31, 2022 2021": a date's day before them)."""
    trailing = figures(text)
    words = [w for w in text.split() if w not in _CURRENCY][-trailing:] if trailing else []
    years = 0
    while years < len(words) and _YEAR.fullmatch(words[-1 - years].strip("()")):
        years += 1
    return bool(words) and (years == len(words) or (years >= 2 and years == len(words) - 1))

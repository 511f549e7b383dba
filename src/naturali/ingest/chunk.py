"""Chunk extracted text by structure inside the embedder's window, with a little overlap,
keeping character offsets. Chunks never cross a page, so a PDF chunk's page (a slide's
number) is exact, and never run from one section into the next. By layout:

- prose: headings (ATX ``# Title``, setext ``Title`` over ``===``/``---``, and in
  reStructuredText any punctuation underline) start a chunk; then paragraphs, sentences, words.
- code (source, JSON/YAML/TOML/XML): blank-line blocks, a top-level definition or section
  (``def``, ``class``, ``func``, ``fn``, ``[table]``, ``key:`` …) starting a chunk; a block
  over the window splits between lines, never inside one that fits.
- printed (a PDF's text layer, OCR): paragraphs, sentences, words; headings only where the
  page's reader marked them by its layout (``Page.headings``: a PDF's type and outline), never
  from characters — a footnote that starts with ``#`` or a rule of dashes under a line is what
  was printed, and Markdown's rules would make it the heading of every page after it. A
  table's rows (``Page.tables``) split between lines, and a chunk that starts among them is
  led by the table's header (cut to ``HEADER_TOKENS``), as a CSV's rows are.
- rows (CSV/TSV): whole rows, the header line carried into every chunk (cut to
  ``HEADER_TOKENS`` when longer; a header that long is also a passage of its own), a row over
  the window split into words.

Every chunk is bounded whatever the file's shape: a run of text without whitespace is cut
into pieces of ``PIECE_CHARS``, a span longer than ``COUNTED_CHARS`` is split without being
tokenised whole, and a version of more than ``max_chunks`` chunks is refused
(``TooManyChunks``). A chunk's text is its span, plus at most ``HEADER_TOKENS`` of a CSV's or
a table's header; the next chunk repeats at most ``OVERLAP_TOKENS``."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from naturali.contracts.formats import Layout
from naturali.ingest.extract import Page
from naturali.ingest.formats import Table
from naturali.ingest.sections import ATX, Block, Sections
from naturali.model import ChunkDraft
from naturali.text.context import titled

MAX_TOKENS = 250  # the model sees 256 pieces, two of them [CLS] and [SEP]
OVERLAP_TOKENS = 40
HEADER_TOKENS = 64
# A word piece covers at least one character, so a run of this many is at most this many
# pieces: cut there, a run without whitespace (a minified file, a line of brackets) fills a
# chunk at most.
PIECE_CHARS = 100
# A span this long holds more than a window of pieces unless its words are absurd; it is
# split at once rather than tokenised whole (the tokenizer's memory grows with its input).
COUNTED_CHARS = 20 * MAX_TOKENS

TokenCounter = Callable[[str], int]

_LINE = re.compile(r"[^\n]*\n?")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_RST_UNDERLINE = re.compile(r"([=\-~^\"'`:+*#])\1{2,}[ \t]*")
_DEFINITION = re.compile(
    r"(?:export\s+|pub(?:\([^)]*\))?\s+|public\s+|private\s+|protected\s+|static\s+|"
    r"async\s+|abstract\s+|final\s+)*"
    r"(?:def|class|func|fn|function|interface|struct|enum|impl|trait|module|type|object|"
    r"(?i:create|alter|select|with|insert))\b"  # a statement of SQL
    r"|\[[^\]\n]+\][ \t]*$"  # a TOML table, an INI section
    r"|[A-Za-z_][\w.-]*:(?:[ \t]|$)"  # a top-level YAML key
    r'|"[^"\n]+":'  # a top-level key of pretty-printed JSON, one level in
)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)\s*")
_PIECE = re.compile(rf"\S{{1,{PIECE_CHARS}}}")


class TooManyChunks(Exception):
    """The text makes more chunks than a version may have."""


def chunk_pages(
    pages: list[Page],
    count_tokens: TokenCounter,
    layout: Layout = "prose",
    max_chunks: int | None = None,
) -> list[ChunkDraft]:
    """The pages' passages, each with the headings it sits under (``ChunkDraft.context``; a
    section goes on over the next page)."""
    drafts: list[ChunkDraft] = []
    sections = Sections()
    for page in pages:
        if layout == "rows":
            spans = list(_rows(page.text, count_tokens))
        elif layout == "code":
            units = _units(page.text, _code_blocks(page.text), count_tokens, layout)
            spans = [(s, e, "") for s, e in _pack(units, titles=False)]
        else:
            spans = list(_sectioned(page, sections, count_tokens, layout))
        for start, end, prefix in spans:
            if max_chunks is not None and len(drafts) >= max_chunks:
                raise TooManyChunks(f"the text makes more than {max_chunks} passages")
            text = prefix + page.text[start:end]
            context = sections.above(start, end)
            drafts.append(
                ChunkDraft(
                    len(drafts), text, page.offset + start, page.offset + end, page.number, context
                )
            )
        sections.turn_page()
    return drafts


def under_title(drafts: list[ChunkDraft], title: str | None) -> list[ChunkDraft]:
    """A document's drafts with its title over their headings."""
    return [replace(d, context=titled(title, d.context)) for d in drafts]


# What a block or unit is: no heading (0, False), a heading (1, True), or a minor heading,
# which closes the chunk before it only once that holds SECTION_TOKENS (a PDF's bold line).
HEADING = 1
MINOR = 2
SECTION_TOKENS = MAX_TOKENS // 3
Unit = tuple[int, int, int, int]  # start, end, tokens, what it is


def _lines(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group().rstrip("\n")) for m in _LINE.finditer(text) if m.group()]


def _blocks(text: str, layout: Layout) -> Iterator[Block]:
    """Paragraphs and headings: (start, end, heading). A paragraph ends at a blank line or
    where a heading begins; a setext heading is its text line and its underline."""
    lines = _lines(text)
    pattern = _RST_UNDERLINE if layout == "rst" else _UNDERLINE
    marked = layout != "printed"  # a printed page's characters mark no heading
    start: int | None = None
    i = 0
    while i < len(lines):
        offset, line = lines[i]
        setext = bool(
            marked and i + 1 < len(lines) and line.strip() and pattern.fullmatch(lines[i + 1][1])
        )
        atx = marked and bool(ATX.match(line))
        if (not line.strip() or atx or setext) and start is not None:
            yield _trimmed(text, start, offset, False)
            start = None
        if atx:
            yield _trimmed(text, offset, offset + len(line), True)
        elif setext:
            end_offset, underline = lines[i + 1]
            yield _trimmed(text, offset, end_offset + len(underline), True)
            i += 1
        elif line.strip() and start is None:
            start = offset
        i += 1
    if start is not None:
        yield _trimmed(text, start, len(text), False)


def _sectioned(
    page: Page, sections: Sections, count_tokens: TokenCounter, layout: Layout
) -> Iterator[tuple[int, int, str]]:
    """A page of prose or print in chunks: its blocks, headings as its text marks them (a
    printed page's: as its reader marked them), a table's rows split between lines, and each
    chunk that starts among a table's rows led by its header."""
    if layout == "printed":
        sections.mark(page.text, page.headings)
        kinds = {h.start: MINOR if h.minor else HEADING for h in page.headings}
        blocks = [(s, e, kinds.get(s, 0)) for s, e, _ in _blocks(page.text, layout)]
    else:
        blocks = list(_blocks(page.text, layout))
        sections.read(page.text, blocks, layout)
    headers = _Headers(page.tables, count_tokens)
    units = _units(page.text, iter(blocks), count_tokens, layout, headers)
    for start, end in _pack(units, titles=True, reserve=headers.reserve):
        header = headers.at(start)
        yield start, end, header + "\n" if header else ""


class _Headers:
    """The tables of a page, each with the header a chunk starting among its rows carries."""

    def __init__(self, tables: tuple[Table, ...], count_tokens: TokenCounter) -> None:
        ordered = sorted(tables, key=lambda t: t.start)
        self._starts = [t.start for t in ordered]
        self._ends = [t.end for t in ordered]
        self._headers: list[tuple[str, int]] = []
        for table in ordered:
            header = _carried_header(table.header, 0, len(table.header), count_tokens)[0]
            self._headers.append((header, count_tokens(header) + 1) if table.header else ("", 0))

    def _table(self, offset: int) -> int | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i if i >= 0 and offset < self._ends[i] else None

    def at(self, start: int) -> str:
        i = self._table(start)
        return "" if i is None else self._headers[i][0]

    def reserve(self, start: int) -> int:
        i = self._table(start)
        return 0 if i is None else self._headers[i][1]

    def overlap(self, start: int, end: int) -> bool:
        """Whether a span holds any of a table's rows."""
        i = bisect.bisect_left(self._starts, end) - 1
        return i >= 0 and start < self._ends[i]


def _trimmed(text: str, start: int, end: int, heading: bool) -> tuple[int, int, bool]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end, heading


def _code_blocks(text: str) -> Iterator[Block]:
    """Blank-line blocks of code or data; a block is a heading when it holds a top-level
    definition (comments and decorators above it stay with it), and a definition line starts
    a block of its own."""
    start: int | None = None
    heading = False
    for offset, line in _lines(text):
        definition = bool(_DEFINITION.match(line))
        if start is not None and (not line.strip() or (definition and heading)):
            yield _trimmed(text, start, offset, False)[:2] + (heading,)
            start, heading = None, False
        if line.strip():
            start = offset if start is None else start
            heading = heading or definition
    if start is not None:
        yield _trimmed(text, start, len(text), False)[:2] + (heading,)


def _units(
    text: str,
    blocks: Iterator[Block],
    count_tokens: TokenCounter,
    layout: Layout,
    headers: _Headers | None = None,
) -> Iterator[Unit]:
    """Block-sized spans; a block over the window is split into sentences (code, a table:
    lines), then words."""
    for block_start, block_end, heading in blocks:
        tokens = _count(text, block_start, block_end, count_tokens)
        if tokens <= MAX_TOKENS:
            yield block_start, block_end, tokens, heading
            continue
        if layout == "code" or (headers is not None and headers.overlap(block_start, block_end)):
            yield from _line_windows(text, block_start, block_end, count_tokens, heading)
            continue
        for sentence in _SENTENCE.finditer(text, block_start, block_end):
            s, e = sentence.span()
            while e > s and text[e - 1].isspace():
                e -= 1
            if e <= s:
                continue
            tokens = _count(text, s, e, count_tokens)
            if tokens <= MAX_TOKENS:
                yield s, e, tokens, heading
            else:
                yield from _word_windows(text, s, e, count_tokens)


def _count(text: str, start: int, end: int, count_tokens: TokenCounter) -> int:
    """The span's word pieces, or more than a window's without tokenising a long span."""
    if end - start > COUNTED_CHARS:
        return MAX_TOKENS + 1
    return count_tokens(text[start:end])


def _word_windows(
    text: str, start: int, end: int, count_tokens: TokenCounter, budget: int = MAX_TOKENS
) -> Iterator[Unit]:
    """Windows of whole words (a word longer than ``PIECE_CHARS`` in pieces of it)."""
    words = [m.span() for m in _PIECE.finditer(text, start, end)]
    i = 0
    while i < len(words):
        j, tokens = i, 0
        while j < len(words):
            t = count_tokens(text[words[j][0] : words[j][1]])
            if tokens + t > budget and j > i:
                break
            tokens += t
            j += 1
        yield words[i][0], words[j - 1][1], min(tokens, budget), False
        i = j


def _line_windows(
    text: str, start: int, end: int, count_tokens: TokenCounter, heading: int
) -> Iterator[Unit]:
    """A long block of code as lines; a line over the window alone splits into words."""
    for offset, line in _lines(text[start:end]):
        s = start + offset
        e = s + len(line.rstrip())
        if e <= s:
            continue
        tokens = _count(text, s, e, count_tokens)
        if tokens <= MAX_TOKENS:
            yield s, e, tokens, heading
        else:
            yield from _word_windows(text, s, e, count_tokens)
        heading = False  # only the block's first unit opens a chunk


def _rows(text: str, count_tokens: TokenCounter) -> Iterator[tuple[int, int, str]]:
    """Chunks of whole rows (a quoted field may hold line breaks), each led by the header; a
    row longer than a window is split into words, each window led by the header too."""
    rows = _row_spans(text)
    first = next(rows, None)
    if first is None:
        return
    header, long_header = _carried_header(text, *first, count_tokens)
    if long_header:  # its columns are searchable once, not in every chunk
        for s, e in _pack(_word_windows(text, *first, count_tokens), titles=False):
            yield s, e, ""
    prefix = header + "\n"
    budget = MAX_TOKENS - count_tokens(header)
    current: list[tuple[int, int]] = []
    tokens = 0
    alone = not long_header  # the header is the whole file until a row comes
    for start, end in rows:
        alone = False
        size = _count(text, start, end, count_tokens)
        if current and tokens + size > budget:
            yield current[0][0], current[-1][1], prefix
            current, tokens = [], 0
        if size > budget:
            for s, e, _, _ in _word_windows(text, start, end, count_tokens, budget):
                yield s, e, prefix
            continue
        current.append((start, end))
        tokens += size
    if current:
        yield current[0][0], current[-1][1], prefix
    if alone:
        yield first[0], first[1], ""


def _carried_header(
    text: str, start: int, end: int, count_tokens: TokenCounter
) -> tuple[str, bool]:
    """The header as each chunk carries it, and whether it had to be cut to HEADER_TOKENS
    (at a field's edge where there is one, marked with an ellipsis)."""
    header = text[start:end]
    if _count(text, start, end, count_tokens) <= HEADER_TOKENS:
        return header, False
    cut = header[: HEADER_TOKENS * 4]
    while count_tokens(cut + " …") > HEADER_TOKENS:
        cut = cut[: len(cut) * 3 // 4]
    edge = max(cut.rfind(","), cut.rfind("\t"), cut.rfind(";"))
    return (cut[:edge] if edge > len(cut) // 2 else cut) + " …", True


def _row_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each non-empty record; a line break inside quotes does not end one."""
    start, quoted = 0, False
    for i, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == "\n" and not quoted:
            if text[start:i].strip():
                yield start, i
            start = i + 1
    if text[start:].strip():
        yield start, len(text.rstrip("\n"))


def _pack(
    units: Iterator[Unit], titles: bool, reserve: Callable[[int], int] = lambda start: 0
) -> Iterator[tuple[int, int]]:
    """Greedily fill chunks with whole units; the next chunk repeats the last unit when it is
    short (a heading, a closing sentence), so context is not lost at the boundary. A heading
    closes the chunk before it unless, with ``titles``, that chunk holds only headings (a
    title over its first section's heading stays with it; a definition of code is no title);
    a minor one only once that chunk holds ``SECTION_TOKENS``.
    A chunk starting at offset ``s`` leaves ``reserve(s)`` pieces of its window to a header it
    is read under."""
    current: list[Unit] = []
    tokens = 0
    for unit in units:
        closes = unit[3] == HEADING or (unit[3] == MINOR and tokens >= SECTION_TOKENS)
        if closes and current and (not titles or not all(u[3] for u in current)):
            yield current[0][0], current[-1][1]
            current, tokens = [], 0
        elif current and tokens + unit[2] > MAX_TOKENS - reserve(current[0][0]):
            yield current[0][0], current[-1][1]
            tail = current[-1]
            room = MAX_TOKENS - reserve(tail[0])
            carry = tail[2] <= OVERLAP_TOKENS and tail[2] + unit[2] <= room
            current, tokens = ([tail], tail[2]) if carry else ([], 0)
        current.append(unit)
        tokens += unit[2]
    if current:
        yield current[0][0], current[-1][1]

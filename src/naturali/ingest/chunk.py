"""Chunk extracted text by structure (headings, paragraphs, then sentences) inside the
embedder's window, with a little overlap, keeping character offsets. Chunks never cross a
page, so a PDF chunk's page is exact, and never run from one section into the next: a heading
(ATX ``# Title`` or setext ``Title`` over ``===``/``---``) starts a chunk."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from naturali.ingest.extract import Page
from naturali.model import ChunkDraft

MAX_TOKENS = 250  # the model sees 256 pieces, two of them [CLS] and [SEP]
OVERLAP_TOKENS = 40

TokenCounter = Callable[[str], int]

_LINE = re.compile(r"[^\n]*\n?")
_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)\s*")


def chunk_pages(pages: list[Page], count_tokens: TokenCounter) -> list[ChunkDraft]:
    drafts: list[ChunkDraft] = []
    for page in pages:
        for start, end in _pack(_units(page.text, count_tokens)):
            text = page.text[start:end]
            drafts.append(
                ChunkDraft(len(drafts), text, page.offset + start, page.offset + end, page.number)
            )
    return drafts


Unit = tuple[int, int, int, bool]  # start, end, tokens, whether it is a heading


def _blocks(text: str) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs and headings: (start, end, heading). A paragraph ends at a blank line or
    where a heading begins; a setext heading is its text line and its underline."""
    lines = [(m.start(), m.group().rstrip("\n")) for m in _LINE.finditer(text) if m.group()]
    start: int | None = None
    i = 0
    while i < len(lines):
        offset, line = lines[i]
        setext = bool(i + 1 < len(lines) and line.strip() and _UNDERLINE.fullmatch(lines[i + 1][1]))
        if (not line.strip() or _ATX.match(line) or setext) and start is not None:
            yield _trimmed(text, start, offset, False)
            start = None
        if _ATX.match(line):
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


def _trimmed(text: str, start: int, end: int, heading: bool) -> tuple[int, int, bool]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end, heading


def _units(text: str, count_tokens: TokenCounter) -> Iterator[Unit]:
    """Paragraph-sized spans; a paragraph over the window is split into sentences, then words."""
    for block_start, block_end, heading in _blocks(text):
        block = text[block_start:block_end]
        tokens = count_tokens(block)
        if tokens <= MAX_TOKENS:
            yield block_start, block_end, tokens, heading
            continue
        for sentence in _SENTENCE.finditer(block):
            s, e = block_start + sentence.start(), block_start + sentence.end()
            while e > s and text[e - 1].isspace():
                e -= 1
            if e <= s:
                continue
            tokens = count_tokens(text[s:e])
            if tokens <= MAX_TOKENS:
                yield s, e, tokens, heading
            else:
                yield from _word_windows(text, s, e, count_tokens)


def _word_windows(text: str, start: int, end: int, count_tokens: TokenCounter) -> Iterator[Unit]:
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    i = 0
    while i < len(words):
        j, tokens = i, 0
        while j < len(words):
            t = count_tokens(text[words[j][0] : words[j][1]])
            if tokens + t > MAX_TOKENS and j > i:
                break
            tokens += t
            j += 1
        yield words[i][0], words[j - 1][1], min(tokens, MAX_TOKENS), False
        i = j


def _pack(units: Iterator[Unit]) -> Iterator[tuple[int, int]]:
    """Greedily fill chunks with whole units; the next chunk repeats the last unit when it is
    short (a heading, a closing sentence), so context is not lost at the boundary. A heading
    closes the chunk before it unless that chunk holds only headings (a title over its first
    section's heading stays with it)."""
    current: list[Unit] = []
    tokens = 0
    for unit in units:
        if unit[3] and not all(u[3] for u in current):
            yield current[0][0], current[-1][1]
            current, tokens = [], 0
        elif current and tokens + unit[2] > MAX_TOKENS:
            yield current[0][0], current[-1][1]
            tail = current[-1]
            carry = tail[2] <= OVERLAP_TOKENS and tail[2] + unit[2] <= MAX_TOKENS
            current, tokens = ([tail], tail[2]) if carry else ([], 0)
        current.append(unit)
        tokens += unit[2]
    if current:
        yield current[0][0], current[-1][1]

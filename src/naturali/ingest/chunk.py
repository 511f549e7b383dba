"""Chunk extracted text by structure (headings, paragraphs, then sentences) inside the
embedder's window, with a little overlap, keeping character offsets. Chunks never cross a
page, so a PDF chunk's page is exact."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from naturali.ingest.extract import Page
from naturali.model import ChunkDraft

MAX_TOKENS = 250  # the model sees 256 pieces, two of them [CLS] and [SEP]
OVERLAP_TOKENS = 40

TokenCounter = Callable[[str], int]

_BLOCK = re.compile(r"\S(?:.*?\S)?(?=\s*\Z|\n[ \t]*\n|\n(?=#{1,6}\s))", re.DOTALL)
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


Unit = tuple[int, int, int]  # start, end, tokens


def _units(text: str, count_tokens: TokenCounter) -> Iterator[Unit]:
    """Paragraph-sized spans; a paragraph over the window is split into sentences, then words."""
    for block in _BLOCK.finditer(text):
        tokens = count_tokens(block.group())
        if tokens <= MAX_TOKENS:
            yield block.start(), block.end(), tokens
            continue
        for sentence in _SENTENCE.finditer(block.group()):
            s, e = block.start() + sentence.start(), block.start() + sentence.end()
            while e > s and text[e - 1].isspace():
                e -= 1
            if e <= s:
                continue
            tokens = count_tokens(text[s:e])
            if tokens <= MAX_TOKENS:
                yield s, e, tokens
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
        yield words[i][0], words[j - 1][1], min(tokens, MAX_TOKENS)
        i = j


def _pack(units: Iterator[Unit]) -> Iterator[tuple[int, int]]:
    """Greedily fill chunks with whole units; the next chunk repeats the last unit when it is
    short (a heading, a closing sentence), so context is not lost at the boundary."""
    current: list[Unit] = []
    tokens = 0
    for unit in units:
        if current and tokens + unit[2] > MAX_TOKENS:
            yield current[0][0], current[-1][1]
            tail = current[-1]
            carry = tail[2] <= OVERLAP_TOKENS and tail[2] + unit[2] <= MAX_TOKENS
            current, tokens = ([tail], tail[2]) if carry else ([], 0)
        current.append(unit)
        tokens += unit[2]
    if current:
        yield current[0][0], current[-1][1]

"""Snippets: at most 480 UTF-16 code units around the first match, with zero-based UTF-16
start/end offsets into the field and, for bodies, one-based Markdown line ranges that count
the front-matter lines."""

from __future__ import annotations

from dataclasses import dataclass

from naturali.text.languages import unspaced
from naturali.text.tokens import WORD, fold_char

MAX_UNITS = 480
LARGE_BODY = 64 * 1024


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class Snippet:
    field: str
    text: str
    start: int  # UTF-16 code units, zero-based, into the field's text
    end: int
    match_located: bool
    line_start: int | None = None  # one-based, in the whole file (front matter counted)
    line_end: int | None = None


def find(text: str, tokens: list[str]) -> int | None:
    """Character index of the first token found in ``text`` (case/diacritic-insensitive)."""
    folded, source = _folded_with_map(text)
    best: int | None = None
    for token in tokens:
        at = _find_word(folded, token)
        if at is not None:
            position = source[at] if source is not None else at
            best = position if best is None else min(best, position)
    return best


def find_phrase(text: str, tokens: list[str]) -> int | None:
    """Character index where ``tokens`` first occur in order and adjacent as words."""
    folded, source = _folded_with_map(text)
    spans = [(m.group(), m.start()) for m in WORD.finditer(folded)]
    n = len(tokens)
    for i in range(len(spans) - n + 1):
        if all(spans[i + j][0] == tokens[j] for j in range(n)):
            at = spans[i][1]
            return source[at] if source is not None else at
    return None


def _folded_with_map(text: str) -> tuple[str, list[int] | None]:
    """``fold(text)`` plus, per folded character, the index of its source character (None
    when folding maps one character to one, as it almost always does)."""
    if text.isascii():
        return text.lower(), None
    table = {ord(c): fold_char(c) for c in set(text)}
    if all(len(f) == 1 for f in table.values()):
        return text.translate(table), None
    chars: list[str] = []
    source: list[int] = []
    for i, c in enumerate(text):
        f = table[ord(c)]
        chars.append(f)
        source.extend([i] * len(f))
    return "".join(chars), source


def _find_word(haystack: str, token: str) -> int | None:
    """Where ``token`` stands as a whole word; a word of a script written without spaces
    stands anywhere in its run."""
    if token and not token.isascii() and unspaced(token):
        at = haystack.find(token)
        return at if at >= 0 else None
    start = 0
    while True:
        at = haystack.find(token, start)
        if at < 0:
            return None
        before = haystack[at - 1] if at else " "
        after_i = at + len(token)
        after = haystack[after_i] if after_i < len(haystack) else " "
        if not before.isalnum() and not after.isalnum():
            return at
        start = at + 1


def make(field: str, text: str, at: int | None, line_offset: int = 0) -> Snippet:
    """A window of ≤ 480 UTF-16 units starting a little before ``at`` (or an opening excerpt
    when ``at`` is None)."""
    located = at is not None
    begin = 0 if at is None else max(0, at - 60)
    if begin:  # start on a word boundary
        space = text.rfind(" ", 0, begin)
        begin = space + 1 if space >= 0 and at is not None and at - space < 120 else begin
    window = _take_units(text[begin:], MAX_UNITS)
    start = utf16_len(text[:begin])
    end = start + utf16_len(window)
    if field != "body":
        return Snippet(field, window, start, end, located)
    first = line_offset + text.count("\n", 0, begin) + 1
    # A newline that ends the window closes its last line; it does not start another.
    last = first + window.count("\n", 0, len(window) - 1 if window.endswith("\n") else None)
    return Snippet(field, window, start, end, located, first, last)


def _take_units(text: str, limit: int) -> str:
    head = text[:limit]
    if utf16_len(head) <= limit:
        return head  # no characters outside the BMP: one unit each
    units = 0
    for i, c in enumerate(text):
        units += 2 if ord(c) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text

"""A PDF page's lines as PDFium sets them: each line's text with the type it is set in (size,
weight) and where it stands on the page — what pdf_layout.py reads a page's structure from."""

from __future__ import annotations

import ctypes
import statistics
from collections import Counter
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from ftfy import fix_encoding


@dataclass(frozen=True)
class Line:
    text: str
    size: float  # the type size most of its letters are set in
    weight: int  # their font weight (400 regular, 700 bold; some writers use their own scale)
    heavy: bool  # its font's name or flags say bold
    top: float  # page coordinates, from the bottom
    bottom: float
    letters: int


_FORCE_BOLD = 1 << 18  # PDF font descriptor flag 19
_NAME_BYTES = 128
# A line's type is read from this many of its letters, spread over it: a line is mostly set in
# one type, and asking PDFium for every character's doubles the time a long report takes.
SAMPLED = 12


def page_lines(document: pdfium.PdfDocument, number: int) -> list[Line]:
    """Page ``number``'s lines in PDFium's reading order (empty when it has no text layer)."""
    page = document[number - 1]
    try:
        textpage = page.get_textpage()
        try:
            return _lines(textpage)
        finally:
            textpage.close()
    finally:
        page.close()


def _lines(textpage: pdfium.PdfTextPage) -> list[Line]:
    count = textpage.count_chars()
    text = textpage.get_text_range() if count else ""
    if len(text) != count:  # a surrogate pair or a writer's oddity: lines without their type
        return [_plain(t) for t in text.replace("\r", "").split("\n") if t.strip()]
    raw = textpage.raw
    lines: list[Line] = []
    start = 0
    for end in [i for i, c in enumerate(text) if c == "\n"] + [count]:
        line_text = text[start:end].rstrip("\r\x00")
        if line_text.strip():
            line = _line(raw, textpage, line_text, start)
            if lines and on_one_baseline(lines[-1], line):
                line = joined(lines.pop(), line)
            lines.append(line)
        start = end + 1
    return lines


def on_one_baseline(before: Line, line: Line) -> bool:
    """Whether PDFium broke one printed line in two (a writer that places each word, or each
    cell of a table's row, on its own): the next piece stands on the same baseline."""
    height = before.top - before.bottom
    return before.size > 0 and line.size > 0 and abs(before.bottom - line.bottom) < 0.3 * height


def joined(before: Line, after: Line) -> Line:
    """Two pieces of one printed line as one, in the type most of its letters are set in."""
    main = before if before.letters >= after.letters else after
    return Line(
        f"{before.text} {after.text}",
        main.size,
        main.weight,
        main.heavy,
        max(before.top, after.top),
        min(before.bottom, after.bottom),
        before.letters + after.letters,
    )


def _line(raw: object, textpage: pdfium.PdfTextPage, text: str, start: int) -> Line:
    letters = [start + i for i, c in enumerate(text) if c.isalnum()]
    if not letters:
        return _plain(text)
    sample = letters[:: max(1, len(letters) // SAMPLED)]
    size = Counter(round(pdfium_c.FPDFText_GetFontSize(raw, i), 1) for i in sample)
    weight = Counter(pdfium_c.FPDFText_GetFontWeight(raw, i) for i in sample)
    boxes = [textpage.get_charbox(i) for i in (letters[0], letters[len(letters) // 2])]
    return Line(
        _clean(text),
        size.most_common(1)[0][0],
        weight.most_common(1)[0][0],
        _heavy(raw, letters[len(letters) // 2]),
        max(box[3] for box in boxes),
        min(box[1] for box in boxes),
        len(letters),
    )


def _plain(text: str) -> Line:
    text = _clean(text)
    return Line(text, 0.0, 0, False, 0.0, 0.0, sum(c.isalnum() for c in text))


def _heavy(raw: object, index: int) -> bool:
    """Whether the character's font is a bold one by its name or its flags (writers that give
    no weight still name a bold face "…-Bold")."""
    name = ctypes.create_string_buffer(_NAME_BYTES)
    flags = ctypes.c_int(0)
    pdfium_c.FPDFText_GetFontInfo(raw, index, name, _NAME_BYTES, ctypes.byref(flags))
    face = name.value.decode("latin-1").lower()
    return bool(flags.value & _FORCE_BOLD) or "bold" in face or "black" in face


def body_type(pages: list[list[Line]]) -> tuple[float, int]:
    """The size and weight most of the document's letters are set in."""
    sizes: Counter[float] = Counter()
    weights: Counter[int] = Counter()
    for line in (line for lines in pages for line in lines if line.size):
        sizes[line.size] += line.letters
        weights[line.weight] += line.letters
    if not sizes:
        return 0.0, 0
    return sizes.most_common(1)[0][0], weights.most_common(1)[0][0]


def line_pitch(lines: list[Line]) -> float:
    """The usual distance from one line's foot to the next's on a page (0: unknown)."""
    pitches = [
        a.bottom - b.bottom
        for a, b in zip(lines, lines[1:], strict=False)
        if a.size and b.size and a.bottom - b.bottom > 0
    ]
    return statistics.median(pitches) if pitches else 0.0


def _clean(text: str) -> str:
    """One line's text, spaces collapsed; mojibake undone when ftfy is sure (a PDF written by
    a tool that put UTF-8 bytes into a single-byte font reads "lÃªers" for "lêers")."""
    return " ".join(fix_encoding(text.replace("\x00", "")).split())

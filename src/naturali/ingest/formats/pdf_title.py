"""A PDF's title when its metadata does not give one that names it: metadata titles are often
the software's ("Microsoft Word - F20_10K.docx"), a placeholder ("Document", "Untitled") or
an identifier (an EDGAR accession number), and then the first page's most prominent text —
the run set in its largest type, when that type stands out from the page's body — is what a
reader would call the document."""

from __future__ import annotations

import re
import statistics

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

# Read no further into the first page than this: a title is near its top.
MAX_CHARS = 4000
TITLE_CHARS = 200
# The largest type must be this much larger than the page's median to stand out as a title,
# and a title's characters are set within a tenth of it.
PROMINENT = 1.2
SAME_TYPE = 0.9

_PLACEHOLDER = re.compile(
    r"(?i)(?:microsoft\s+(?:word|excel|powerpoint)\b.*|untitled\b.*|document\s*\d*|doc\d*|"
    r"title|slide\s*\d*|presentation\s*\d*|pdf|none|unknown)"
)
_FILE_NAME = re.compile(r"(?i)\.(?:docx?|xlsx?|pptx?|pdf|indd|rtf|odt|pages|txt|html?)$")


def names_nothing(title: str | None) -> bool:
    """Whether a metadata title is missing, a placeholder, a file name or an identifier (one
    word holding a digit: a file stem, an accession number)."""
    text = (title or "").strip()
    return (
        not text
        or bool(_PLACEHOLDER.fullmatch(text) or _FILE_NAME.search(text))
        or (" " not in text and any(c.isdigit() for c in text))
    )


def first_page_title(document: pdfium.PdfDocument) -> str | None:
    """The first page's text set in its largest type, when that type stands out."""
    if len(document) == 0:
        return None
    page = document[0]
    try:
        textpage = page.get_textpage()
        try:
            count = min(textpage.count_chars(), MAX_CHARS)
            raw = textpage.raw
            chars = [
                (chr(pdfium_c.FPDFText_GetUnicode(raw, i)), pdfium_c.FPDFText_GetFontSize(raw, i))
                for i in range(count)
            ]
        finally:
            textpage.close()
    finally:
        page.close()
    return prominent(chars)


def prominent(chars: list[tuple[str, float]]) -> str | None:
    """The first run of text in the largest type (its spaces and line breaks kept as one
    space), when that type is ``PROMINENT`` times the median of the letters'."""
    sizes = [size for c, size in chars if c.isalnum()]
    if not sizes:
        return None
    top = max(sizes)
    if top < statistics.median(sizes) * PROMINENT:
        return None
    run: list[str] = []
    for c, size in chars:
        if c.isalnum() and size >= top * SAME_TYPE:
            run.append(c)
        elif c.isalnum() and run:
            break  # the body begins
        elif run:
            run.append(c)
    title = " ".join("".join(run).split())[:TITLE_CHARS]
    return title or None

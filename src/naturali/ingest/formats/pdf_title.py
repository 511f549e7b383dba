"""A PDF's title when its metadata does not give one that names it: metadata titles are often
the software's ("Microsoft Word - F20_10K.docx"), a placeholder ("Document", "Untitled") or
an identifier (an EDGAR accession number), and then the first page's most prominent text —
the run set in its largest type, when that type stands out from the page's body — is what a
reader would call the document."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

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
# An SEC filing's cover page names the registrant, the form and the period in the filer's own
# words; the metadata title of a filing is its filing agent's ("10-K - 02/07/2019 - 3M
# Company" for the year 2018, or an accession number).
_FORM = re.compile(r"\bFORM\s+(10-K|10-Q|8-K|20-F|6-K|40-F|10-KT|11-K)\b", re.IGNORECASE)
# A cover set in two columns reads across them: "For the quarterly period ended Commission file
# March 31, 2021 number 1-5805", so a few words may come between "ended" and its date.
_PERIOD = re.compile(
    r"\bfor\s+the\s+(fiscal\s+year|quarterly\s+period|year|period)\s+ended\s*:?\s*"
    r"(?:[A-Za-z]+\s+){0,3}?([A-Z][a-z]+\.?\s+\d{1,2}\s*,\s*\d{4})",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\bDate\s+of\s+Report\s*\(Date\s+of\s+earliest\s+event\s+reported\)\s*:?\s*"
    r"([A-Z][a-z]+\.?\s+\d{1,2}\s*,\s*\d{4})",
    re.IGNORECASE,
)
_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.IGNORECASE)
_COVER_PRINTING = re.compile(
    r"(?i)united\s+states|securities|exchange|commission|washington|\bform\b|report|"
    r"pursuant|\bact\b|registrant|transition|\d{3}|^\W*(?:or|and|mark\s+one)\W*$"
)
_COMMISSION_FILE = re.compile(r"(?i)commission\s+file|\d{3}-\d")
_RULE = re.compile(r"_{3,}")  # a cover's blanks and rules, which join the lines beside them
_EDGES = " _-–—(:*•"
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


def cover_title(first_page: str, prominent: Sequence[str] = ()) -> str | None:
    """A filing's title from its cover page ("3M COMPANY — Form 10-K for the fiscal year ended
    December 31, 2018"), or None for a page that is no filing's cover. The registrant is the
    name over "(Exact name of registrant …)", else the first of the page's ``prominent``
    lines (its headings, outermost first) that is not the cover's own printing."""
    text = " ".join(first_page.split())
    form = _FORM.search(text)
    if form is None:
        return None
    period = _PERIOD.search(text)
    reported = _REPORTED.search(text)
    if period is not None:
        when = f" for the {' '.join(period.group(1).lower().split())} ended {period.group(2)}"
    else:
        when = f" dated {reported.group(1)}" if reported is not None else ""
    company = _registrant(first_page)
    if company is None:
        company = next((line for line in prominent if not _COVER_PRINTING.search(line)), "")
    company = company.strip(_EDGES)
    if not (company or when):
        return None
    named = f"{company} — " if company else ""
    return f"{named}Form {form.group(1).upper()}{when}"[:TITLE_CHARS]


def _registrant(first_page: str) -> str | None:
    """The name over "(Exact name of registrant as specified in its charter)" ("" when that
    label heads nothing a text layer holds: a logo), else the line under "Commission file
    number …" when it is no printing of the cover's own; None for neither."""
    lines = [" ".join(line.split()) for line in first_page.splitlines()]
    for i, line in enumerate(lines):
        found = _REGISTRANT.search(line)
        if found is None:
            continue
        before = _last_field(line[: found.start()])
        if before:
            return before
        above = [_last_field(line) for line in lines[max(0, i - 2) : i] if _last_field(line)]
        if above and not _COMMISSION_FILE.search(above[-1]):
            return above[-1].strip(" (")
        return ""
    for previous, line in zip(lines, lines[1:], strict=False):
        if _COMMISSION_FILE.search(previous) and line and not _COVER_PRINTING.search(line):
            return line
    return None


def _last_field(line: str) -> str:
    """What a line says after its last blank or rule (``_RULE``)."""
    return _RULE.split(line)[-1].strip()


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
    title = " ".join("".join(run).split()).rstrip(" (")[:TITLE_CHARS]
    return title or None

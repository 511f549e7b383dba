"""A passage's context: its document's title and the headings it sits under, which both legs of
a search read in front of the passage's own text (the returned ``content`` stays the passage's
own). A question that names a filing's company and year, or a manual's command, finds pages
that never say it: "Options" and "Example" sections read alike in every manual."""

from __future__ import annotations

from collections.abc import Sequence

SEPARATOR = " › "
# The model reads 256 pieces of a chunk of at most 250; a context's few words push the tail of
# a full chunk out of its window, and the next chunk repeats that tail (chunk.OVERLAP_TOKENS).
MAX_CONTEXT_CHARS = 160


def context_of(title: str | None, headings: Sequence[str]) -> str:
    """The title, then the headings outermost first, each said once (a document whose first
    heading is its title, or a filing whose cover prints the company the title names, states
    it once), within ``MAX_CONTEXT_CHARS``: the outermost headings
    under the title give way first (the nearest says most of what a passage is about; the
    title, whose document it is), then the end is cut."""
    parts: list[str] = []
    named = f" {_folded(title or '')} "
    for part in [title or "", *headings]:
        part = " ".join(part.split())
        said = bool(parts) and (
            _folded(parts[-1]) == _folded(part) or f" {_folded(part)} " in named
        )  # the heading before it, or the title, says it already
        if part and not said:
            parts.append(part)
    while len(parts) > 2 and len(SEPARATOR.join(parts)) > MAX_CONTEXT_CHARS:
        del parts[1]
    context = SEPARATOR.join(parts)
    if len(context) <= MAX_CONTEXT_CHARS:
        return context
    return context[:MAX_CONTEXT_CHARS].rsplit(" ", 1)[0]


def titled(title: str | None, context: str) -> str:
    """A chunk's ``context`` (its headings, as the chunker found them) under its document's
    title."""
    return context_of(title, context.split(SEPARATOR) if context else [])


def in_context(text: str, context: str) -> str:
    """What a search reads of a passage: its context, then its text — without the context's
    last part when the text opens with it (the first chunk of a document under its title)."""
    parts = context.split(SEPARATOR) if context else []
    first_line = text.lstrip().split("\n", 1)[0].lstrip("#")
    if parts and _folded(parts[-1]) == _folded(first_line):
        parts.pop()
    return f"{SEPARATOR.join(parts)}\n\n{text}" if parts else text


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()

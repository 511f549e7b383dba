"""Readers of the formats parsed in the isolated worker: each module's ``read(data)`` returns
``(pages, title)``, pages as ``(number, text)``. Structure is written as Markdown (``#``
headings, blank lines between blocks, fenced code) so one chunker keeps each chunk inside its
section whatever the format."""

from __future__ import annotations

Pages = list[tuple[int | None, str]]


class FormatError(Exception):
    """A file refused for a reason its code names (invalid_file, unsafe_file, …)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def heading(level: int, text: str) -> str:
    return "#" * max(1, min(level, 6)) + " " + " ".join(text.split())


def blocks(parts: list[str]) -> str:
    """Blocks of text, one blank line between them, empty ones dropped."""
    return "\n\n".join(p.strip() for p in parts if p and p.strip())

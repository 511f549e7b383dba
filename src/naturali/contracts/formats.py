"""The file formats naturali ingests, by file name suffix: the content type each document
gets, how its text is laid out for chunking, and which are parsed in the isolated worker
(``ingest/``). Shared with the clients (``naturali sync`` uploads what is listed here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# printed: text read off a printed page (a PDF's text layer, OCR), which has no markup: a line
# that starts with "#" or one of dashes is what was printed, never a heading.
Layout = Literal["prose", "rst", "code", "rows", "printed"]


@dataclass(frozen=True)
class Format:
    content_type: str
    layout: Layout = "prose"
    parsed: str | None = None  # the worker's kind, for formats not read here


_OFFICE = "application/vnd.openxmlformats-officedocument."
FORMATS: dict[str, Format] = {
    **dict.fromkeys((".md", ".markdown", ".mdown"), Format("text/markdown")),
    **dict.fromkeys((".txt", ".text", ""), Format("text/plain")),
    ".rst": Format("text/x-rst", "rst"),
    ".pdf": Format("application/pdf", "printed", parsed="pdf"),
    ".docx": Format(_OFFICE + "wordprocessingml.document", parsed="docx"),
    ".pptx": Format(_OFFICE + "presentationml.presentation", parsed="pptx"),
    ".epub": Format("application/epub+zip", parsed="epub"),
    **dict.fromkeys((".html", ".htm", ".xhtml"), Format("text/html", parsed="html")),
    ".png": Format("image/png", "printed", parsed="image"),
    **dict.fromkeys((".jpg", ".jpeg"), Format("image/jpeg", "printed", parsed="image")),
    **dict.fromkeys((".tif", ".tiff"), Format("image/tiff", "printed", parsed="image")),
    ".webp": Format("image/webp", "printed", parsed="image"),
    ".csv": Format("text/csv", "rows"),
    ".tsv": Format("text/tab-separated-values", "rows"),
    ".json": Format("application/json", "code"),
    **dict.fromkeys((".yaml", ".yml"), Format("application/yaml", "code")),
    ".toml": Format("application/toml", "code"),
    ".xml": Format("application/xml", "code"),
    **{
        suffix: Format(f"text/x-{language}", "code")
        for language, suffixes in {
            "python": ".py .pyi",
            "javascript": ".js .mjs .cjs .jsx",
            "typescript": ".ts .tsx",
            "go": ".go",
            "rust": ".rs",
            "java": ".java",
            "kotlin": ".kt .kts",
            "scala": ".scala",
            "c": ".c .h",
            "c++": ".cpp .cc .cxx .hpp .hh",
            "csharp": ".cs",
            "ruby": ".rb",
            "php": ".php",
            "swift": ".swift",
            "shellscript": ".sh .bash .zsh",
            "sql": ".sql",
            "lua": ".lua",
            "r": ".r",
            "ini": ".ini .cfg .conf .properties",
        }.items()
        for suffix in suffixes.split()
    },
}

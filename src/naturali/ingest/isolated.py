"""Parsing in isolation: every PDF, Office file, EPUB and HTML page is read in a child process
with bounded CPU time, memory and wall time, at low priority, a few at a time.

A file from a user is a program as much as a document (a 200 KB PDF or ZIP can inflate to
gigabytes, a page can draw itself forever, XML can declare entities that expand without end
or point at local files), so none is parsed inside the server process: a bomb costs its own
worker, never the searches of other callers. ``python -m naturali.ingest.worker KIND`` is the
worker: the file's bytes on stdin, JSON pages (or an error) on stdout. This process never
imports a parser (pypdf alone is ~0.13 s of every server's start).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

# The worker's limits (worker.py and formats/ hold the parsers' own).
CPU_SECONDS = 20
WALL_SECONDS = 40
MEMORY_BYTES = 1024 * 1024 * 1024
# Parses at once: the others wait their turn rather than take every core.
_SLOTS = threading.BoundedSemaphore(max(1, (os.cpu_count() or 2) // 2))


class ParseError(Exception):
    """The file cannot be read; ``code`` says why (invalid_pdf, invalid_file, unsafe_file,
    pdf_limit_reached, file_limit_reached)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ParsedPage:
    number: int | None  # the page or slide, 1-based; None where the format has none
    text: str


@dataclass(frozen=True)
class Parsed:
    pages: list[ParsedPage]
    title: str | None


def parse(kind: str, data: bytes) -> Parsed:
    """The text of a file of this kind (pdf, docx, pptx, epub, html), read by a worker
    process under the limits above."""
    over = "pdf_limit_reached" if kind == "pdf" else "file_limit_reached"
    with _SLOTS:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "naturali.ingest.worker", kind],
                input=data,
                capture_output=True,
                timeout=WALL_SECONDS,
                preexec_fn=_limit_worker,  # only setrlimit and nice before exec
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ParseError(over, f"reading the file took longer than {WALL_SECONDS} s") from exc
    try:
        answer: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        # Killed by a limit (CPU time: SIGXCPU/SIGKILL; memory: MemoryError or abort).
        raise ParseError(
            over, "reading the file needed more CPU time or memory than a document may use"
        ) from None
    if "error" in answer:
        raise ParseError(answer["code"], answer["error"])
    pages = [ParsedPage(p["number"], p["text"]) for p in answer["pages"]]
    return Parsed(pages, answer["title"])


def _limit_worker() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    os.nice(10)

"""PDF text extraction, isolated: every PDF is read in a child process with bounded
decompression, CPU time, memory and wall time, at low priority, a few at a time.

A PDF is a program as much as a document (a 200 KB file can inflate to gigabytes, a page can
draw itself forever), so no PDF is parsed inside the server process: a bomb costs its own
worker, never the searches of other callers. ``python -m naturali.ingest.pdf_worker`` is the
worker: PDF bytes on stdin, JSON pages (or an error) on stdout. This process never imports
pypdf (~0.13 s of every server's start).
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

# The worker's limits (pdf_worker.py holds the parser's own).
CPU_SECONDS = 20
WALL_SECONDS = 40
MEMORY_BYTES = 1024 * 1024 * 1024
# Extractions at once: the others wait their turn rather than take every core.
_SLOTS = threading.BoundedSemaphore(max(1, (os.cpu_count() or 2) // 2))


class PdfError(Exception):
    """The PDF cannot be read (``code`` says why: invalid_pdf, pdf_limit_reached)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class PdfText:
    pages: list[str]
    title: str | None


def read(data: bytes) -> PdfText:
    """The text of each page, read by a worker process under the limits above."""
    with _SLOTS:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "naturali.ingest.pdf_worker"],
                input=data,
                capture_output=True,
                timeout=WALL_SECONDS,
                preexec_fn=_limit_worker,  # only setrlimit and nice before exec
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PdfError(
                "pdf_limit_reached", f"reading the PDF took longer than {WALL_SECONDS} s"
            ) from exc
    try:
        answer: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        # Killed by a limit (CPU time: SIGXCPU/SIGKILL; memory: MemoryError or abort).
        raise PdfError(
            "pdf_limit_reached",
            "reading the PDF needed more CPU time or memory than a document may use",
        ) from None
    if "error" in answer:
        raise PdfError(answer["code"], answer["error"])
    return PdfText(answer["pages"], answer["title"])


def _limit_worker() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    os.nice(10)

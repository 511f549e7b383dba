"""PDF text extraction, isolated: every PDF is read in a child process with bounded
decompression, CPU time, memory and wall time, at low priority, a few at a time.

A PDF is a program as much as a document (a 200 KB file can inflate to gigabytes, a page can
draw itself forever), so no PDF is parsed inside the server process: a bomb costs its own
worker, never the searches of other callers. ``python -m naturali.ingest.pdf`` is the worker:
PDF bytes on stdin, JSON pages (or an error) on stdout.
"""

from __future__ import annotations

import io
import json
import logging
import os
import resource
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

from pypdf import PdfReader, apply_configuration
from pypdf.errors import LimitReachedError, PyPdfError

# pypdf's decompression limits, per stream and per content stream (its defaults are 75 MB
# and 300 MB of work: a 70 MB stream took 39 s of CPU on a 2-core machine).
MAX_STREAM_BYTES = 16 * 1024 * 1024
MAX_DECODING_WORK = 64 * 1024 * 1024
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
                [sys.executable, "-m", "naturali.ingest.pdf"],
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


def _extract(data: bytes) -> dict[str, Any]:
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    limits = {
        "maximum_declared_stream_length": MAX_STREAM_BYTES,
        "zlib_maximum_output_length": MAX_STREAM_BYTES,
        "lzw_maximum_output_length": MAX_STREAM_BYTES,
        "run_length_maximum_output_length": MAX_STREAM_BYTES,
        "array_based_stream_maximum_output_length": MAX_STREAM_BYTES,
        "brotli_maximum_output_length": MAX_STREAM_BYTES,
        "jbig2_maximum_output_length": MAX_STREAM_BYTES,
        "image_maximum_buffer_size": MAX_STREAM_BYTES,
        "stream_decoding_work_maximum_length": MAX_DECODING_WORK,
    }
    try:
        with apply_configuration(None, **limits):
            reader = PdfReader(io.BytesIO(data))
            pages = []
            for page in reader.pages:
                # Decoded first: extract_text() logs a decompression limit and returns "",
                # which would pass a bomb off as a page without text.
                page.get_contents()
                pages.append(page.extract_text() or "")
            title = reader.metadata.title if reader.metadata else None
    except LimitReachedError as exc:
        return {"code": "pdf_limit_reached", "error": f"the PDF is too large once inflated: {exc}"}
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        return {"code": "invalid_pdf", "error": f"the PDF could not be read: {exc}"}
    except RecursionError:
        return {"code": "invalid_pdf", "error": "the PDF could not be read: nested too deeply"}
    return {"pages": pages, "title": str(title) if title else None}


if __name__ == "__main__":
    json.dump(_extract(sys.stdin.buffer.read()), sys.stdout)

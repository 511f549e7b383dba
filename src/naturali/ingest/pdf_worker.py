"""The PDF worker process (``python -m naturali.ingest.pdf_worker``, started by pdf.py under
its CPU, memory and wall-time limits): PDF bytes on stdin, the text of each page and the
title as JSON on stdout, or an error and its code."""

from __future__ import annotations

import io
import json
import logging
import sys
from typing import Any

from ftfy import fix_encoding
from pypdf import PdfReader, apply_configuration
from pypdf.errors import LimitReachedError, PyPdfError

# pypdf's decompression limits, per stream and per content stream (its defaults are 75 MB
# and 300 MB of work: a 70 MB stream took 39 s of CPU on a 2-core machine).
MAX_STREAM_BYTES = 16 * 1024 * 1024
MAX_DECODING_WORK = 64 * 1024 * 1024


def extract(data: bytes) -> dict[str, Any]:
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
                pages.append(_repaired(page.extract_text() or ""))
            title = reader.metadata.title if reader.metadata else None
    except LimitReachedError as exc:
        return {"code": "pdf_limit_reached", "error": f"the PDF is too large once inflated: {exc}"}
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        return {"code": "invalid_pdf", "error": f"the PDF could not be read: {exc}"}
    except RecursionError:
        return {"code": "invalid_pdf", "error": "the PDF could not be read: nested too deeply"}
    return {"pages": pages, "title": str(title) if title else None}


def _repaired(text: str) -> str:
    """pypdf decodes each string by its font's encoding, faithfully; a PDF written by a tool
    that put UTF-8 bytes into a single-byte (WinAnsi) font carries mojibake itself
    ("lÃªers" for "lêers"). ftfy undoes that when it is sure, and leaves other text alone."""
    return fix_encoding(text)


if __name__ == "__main__":
    json.dump(extract(sys.stdin.buffer.read()), sys.stdout)

"""PDF, page by page, with pypdf under decompression limits of its own."""

from __future__ import annotations

import io
import logging

from ftfy import fix_encoding
from pypdf import PdfReader, apply_configuration
from pypdf.errors import LimitReachedError, PyPdfError

from naturali.ingest.formats import FormatError, Pages

# pypdf's decompression limits, per stream and per content stream (its defaults are 75 MB
# and 300 MB of work: a 70 MB stream took 39 s of CPU on a 2-core machine).
MAX_STREAM_BYTES = 16 * 1024 * 1024
MAX_DECODING_WORK = 64 * 1024 * 1024
LIMITS = {
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


def read(data: bytes) -> tuple[Pages, str | None]:
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        with apply_configuration(None, **LIMITS):
            reader = PdfReader(io.BytesIO(data))
            pages: Pages = []
            for number, page in enumerate(reader.pages, start=1):
                # Decoded first: extract_text() logs a decompression limit and returns "",
                # which would pass a bomb off as a page without text.
                page.get_contents()
                pages.append((number, _repaired(page.extract_text() or "")))
            title = reader.metadata.title if reader.metadata else None
    except LimitReachedError as exc:
        raise FormatError(
            "pdf_limit_reached", f"the PDF is too large once inflated: {exc}"
        ) from exc
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise FormatError("invalid_pdf", f"the PDF could not be read: {exc}") from exc
    return pages, str(title) if title else None


def _repaired(text: str) -> str:
    """pypdf decodes each string by its font's encoding, faithfully; a PDF written by a tool
    that put UTF-8 bytes into a single-byte (WinAnsi) font carries mojibake itself
    ("lÃªers" for "lêers"). ftfy undoes that when it is sure, and leaves other text alone."""
    return fix_encoding(text)

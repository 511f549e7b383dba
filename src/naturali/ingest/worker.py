"""The parsing worker process (``python -m naturali.ingest.worker KIND``, started by
isolated.py under its CPU, memory and wall-time limits): the file's bytes on stdin; the text
of each page and the title as JSON on stdout, or an error and its code."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from naturali.ingest.formats import FormatError

KINDS = {"pdf", "docx", "pptx", "epub", "html"}


def extract(kind: str, data: bytes) -> dict[str, Any]:
    if kind not in KINDS:
        return {"code": "invalid_file", "error": f"no parser for {kind!r}"}
    reader = importlib.import_module(f"naturali.ingest.formats.{kind}")
    try:
        pages, title = reader.read(data)
    except FormatError as exc:
        return {"code": exc.code, "error": str(exc)}
    except RecursionError:
        return {"code": _invalid(kind), "error": f"the {kind} file is nested too deeply to read"}
    except MemoryError:
        return {"code": _over(kind), "error": "reading the file needed more memory than allowed"}
    except Exception as exc:  # a library's own error on a malformed file
        return {"code": _invalid(kind), "error": f"the {kind} file could not be read: {exc}"}
    return {"pages": [{"number": n, "text": t} for n, t in pages], "title": title or None}


def _invalid(kind: str) -> str:
    return "invalid_pdf" if kind == "pdf" else "invalid_file"


def _over(kind: str) -> str:
    return "pdf_limit_reached" if kind == "pdf" else "file_limit_reached"


if __name__ == "__main__":
    json.dump(extract(sys.argv[1], sys.stdin.buffer.read()), sys.stdout)

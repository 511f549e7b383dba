"""Reading uploads in isolation: every file, whatever its format, is parsed and chunked by a
worker process (worker.py) under the CPU and memory limits of limits.py, at low priority, a
few at a time.

A file from a user is a program as much as a document (a 200 KB PDF or ZIP can inflate to
gigabytes, a page can draw itself forever, a CSV header can be a million columns wide, a
megabyte of brackets has no place to cut), so none is read inside the server process: a bomb
costs its own worker, never the server's memory or the searches of other callers. Workers
are kept and reused (a folder of small files pays one start, not one a file), replaced when
a limit killed one or one grew large; this process never imports a parser (the PDF and
Office libraries stay out of every server's start).
"""

from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from naturali.errors import InvalidRequest, NaturaliError, PayloadTooLarge, UnsupportedMediaType
from naturali.ingest import limits
from naturali.ingest.worker import FRAME
from naturali.model import ChunkDraft

# Files read at once: the others wait their turn rather than take every core.
SLOTS = max(1, (os.cpu_count() or 2) // 2)
_ERRORS: dict[int, type[NaturaliError]] = {
    400: InvalidRequest,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
}


@dataclass(frozen=True)
class Read:
    """A file as its worker read it: what it is, its title (the one given, else the file's
    own, else its name), and its passages, finished: each under that title and its headings."""

    content_type: str
    title: str
    page_count: int | None
    warnings: list[str]
    drafts: list[ChunkDraft]
    reading: dict[str, Any] | None  # ingest/reading.py Reading's fields, for a paged file

    @property
    def ocr_pending(self) -> list[int]:
        """The pages to read by OCR before the passages are whole (the background job's)."""
        return list(self.reading["ocr_pending"]) if self.reading else []


def read(
    data: bytes,
    filename: str,
    token_counter: str,
    max_chunks: int,
    ocr_texts: dict[int, str | None] | None = None,
    title: str | None = None,
) -> Read:
    """The file's passages, cut as ``token_counter`` counts word pieces, with what OCR read
    on its scanned pages (``ocr_texts``, None for a page left unread by the OCR budget;
    None: not read yet); a NaturaliError when the file is
    refused (its type, its bytes, a limit it reached)."""
    request: dict[str, Any] = {
        "filename": filename,
        "counter": token_counter,
        "max_chunks": max_chunks,
        "ocr_texts": ocr_texts,
        "title": title,
    }
    answer = _answer(request, data, filename)
    drafts = [ChunkDraft(*d) for d in answer["drafts"]]
    return Read(
        answer["content_type"],
        answer["title"],
        answer["page_count"],
        answer["warnings"],
        drafts,
        answer["reading"],
    )


def ocr_page(data: bytes, filename: str, number: int) -> str:
    """Page ``number`` of a PDF or an image, read by OCR in a worker."""
    answer = _answer({"filename": filename, "ocr_page": number}, data, filename)
    return str(answer["text"])


def _answer(request: dict[str, Any], data: bytes, filename: str) -> dict[str, Any]:
    answer = _POOL.ask(request, data)
    if answer is None:  # killed by a limit (CPU time: SIGXCPU; memory: an abort), or hung
        raise InvalidRequest(
            "reading the file needed more CPU time or memory than a document may use",
            code=limits.over_code(data, filename),
            param="file",
        )
    if "error" in answer:
        error = answer["error"]
        raise _ERRORS[error["status"]](error["message"], code=error["code"], param="file")
    return answer


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "naturali.ingest.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def ask(self, request: dict[str, Any], data: bytes, wall: float) -> dict[str, Any] | None:
        """The worker's answer, or None when it died or did not answer within ``wall``."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        header = json.dumps(request).encode()
        try:
            stdin.write(FRAME.pack(len(header)) + header + FRAME.pack(len(data)))
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        deadline = time.monotonic() + wall
        size = self._read(FRAME.size, deadline)
        payload = self._read(FRAME.unpack(size)[0], deadline) if size else None
        return json.loads(payload) if payload is not None else None

    def _read(self, count: int, deadline: float) -> bytes | None:
        stdout = self.process.stdout
        assert stdout is not None
        parts: list[bytes] = []
        while count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                return None
            part = os.read(stdout.fileno(), min(count, 1 << 20))
            if not part:
                return None
            parts.append(part)
            count -= len(part)
        return b"".join(parts)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class _Pool:
    """SLOTS workers, each started when first needed and reused while it lives."""

    def __init__(self, slots: int) -> None:
        self._idle: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(slots):
            self._idle.put(None)

    def ask(self, request: dict[str, Any], data: bytes) -> dict[str, Any] | None:
        worker = self._idle.get() or _Worker()
        answer = None
        try:
            answer = worker.ask(request, data, limits.wall_seconds(len(data)))
        finally:
            if answer is None or answer.get("retire"):
                worker.close()
                self._idle.put(None)
            else:
                self._idle.put(worker)
        return answer


_POOL = _Pool(SLOTS)

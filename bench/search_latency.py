"""Search latency at ≥ 100,000 chunks, warm, beside bare baselines measured in the same run.

How the store is built: SciFact is ingested once (real chunking and embedding, ~9.5k chunks;
reused from --data-dir when present), then its documents are copied under new ids and paths
(`/copy-<k>/…`), chunk texts and vectors included, through the storage port until the project
holds at least --chunks chunks. Embedding 100,000 passages would take over an hour here; the
copies exercise the same index, filters and legs.

Then 200 SciFact queries run warm (limit 10) through the service call and through real HTTP
(uvicorn on loopback), and the bare parts run on the same data: query embedding, numpy exact
cosine over the whole matrix with a top-100 selection, and a bm25s query.

    python bench/search_latency.py [--data-dir DIR] [--chunks 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from beir import ensure_ingested  # noqa: E402
from common import DATA, median, percentile, queries, service  # noqa: E402
from naturali.model import Document, utcnow  # noqa: E402
from naturali.ports.storage import EmbeddedChunk  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402


def build(naturali: Any, user: Any, source_project: str, target: int) -> str:
    for project, _ in naturali.projects.list(user):
        if project.name == f"latency-{target}":
            return str(project.id)
    project, _ = naturali.projects.create(user, f"latency-{target}")
    docs: list[Document] = []
    cursor = None
    while True:
        page = naturali.documents.list(user, source_project, cursor=cursor, limit=100)
        docs += page.documents
        cursor = page.next_cursor
        if not cursor:
            break
    chunks = {d.id: naturali.storage.owner_chunks("document", [d.id]) for d in docs}
    total, copy = 0, 0
    model = naturali.embedder().model_id
    while total < target:
        for doc in docs:
            from naturali.ids import new_id
            from naturali.model import ChunkDraft

            copied = [
                EmbeddedChunk(ChunkDraft(c.ordinal, c.text, c.start, c.end, c.page), c.vector)
                for c in chunks[doc.id]
            ]
            new_doc = Document(
                **{
                    **doc.__dict__,
                    "id": new_id("doc"),
                    "project_id": project.id,
                    "path": f"/copy-{copy}{doc.path}",
                    "created_at": utcnow(),
                }
            )
            naturali.storage.save_document_version(new_doc, copied, model, create=True)
            total += len(copied)
        copy += 1
        print(f"\r  {total} chunks", end="", flush=True)
    print()
    return str(project.id)


def timed(fn: Any, items: list[Any]) -> list[float]:
    out = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - started) * 1000)
    return out


def serve(naturali: Any) -> tuple[str, Any]:
    import uvicorn

    from naturali.api.app import create_app

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from server import free_port

    port = free_port()
    config = uvicorn.Config(create_app(naturali), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DATA / "scifact")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    naturali, user = service(args.data_dir)
    source = ensure_ingested(naturali, user, args.corpus, None)
    project_id = build(naturali, user, source, args.chunks)
    texts = list(queries(args.corpus).values())[: args.queries]
    embedder = naturali.embedder()

    started = time.perf_counter()
    with naturali.indexes.synced(project_id) as index:
        n = index.n
        matrix = index.vectors[:n].copy()
        seqs = [int(s) for s in index.seqs[:n]]
    print(f"{n} chunks; index built in {time.perf_counter() - started:.1f} s (cold, once)")

    def service_call(q: str) -> None:
        naturali.search.search(user, project_id, SearchRequest(query=q, include_memories=False))

    import httpx

    base_url, server = serve(naturali)
    token = naturali.users.new_token(user.id)
    http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"})

    def http_call(q: str) -> None:
        r = http.post(
            f"/v1/projects/{project_id}/knowledge/search",
            json={"query": q, "include_memories": False},
        )
        r.raise_for_status()

    import bm25s

    corpus_texts = [c.text for c in naturali.storage.get_chunks(seqs).values()]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus_texts, stopwords="en", show_progress=False), show_progress=False
    )
    vectors = embedder.embed(texts)

    def cosine(i: int) -> None:
        sims = matrix @ vectors[i]
        top = np.argpartition(-sims, 100)[:100]
        sims[top].argsort()

    def bm25(q: str) -> None:
        retriever.retrieve(
            bm25s.tokenize([q], stopwords="en", show_progress=False),
            k=100,
            show_progress=False,
            n_threads=1,
        )

    for fn in (service_call, http_call):  # warm
        fn(texts[0])
    rows = {
        "query embedding": timed(lambda q: embedder.embed([q]), texts),
        "numpy exact cosine + top-100": timed(cosine, list(range(len(texts)))),
        "bm25s query (k=100)": timed(bm25, texts),
        "naturali service call": timed(service_call, texts),
        "naturali HTTP call": timed(http_call, texts),
    }
    print(f"\n{len(texts)} queries, warm, {n} chunks (ms)")
    print(f"{'':32} {'p50':>7} {'p95':>7}")
    for name, values in rows.items():
        print(f"{name:32} {median(values):7.2f} {percentile(values, 95):7.2f}")
    bare = sum(median(rows[k]) for k in list(rows)[:3])
    print(f"\nbare sum (embedding + cosine + bm25s) p50 {bare:.2f} ms")
    print(f"service p50 / bare sum  {median(rows['naturali service call']) / bare:.2f}")
    print(f"HTTP p50 / bare sum     {median(rows['naturali HTTP call']) / bare:.2f}")
    server.should_exit = True
    naturali.close()


if __name__ == "__main__":
    main()

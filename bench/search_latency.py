"""Search latency at ≥ 100,000 chunks, warm, beside bare baselines measured in the same run.

How the store is built: SciFact is ingested once (real chunking and embedding, ~9.5k chunks;
reused from --data-dir when present), then its documents are copied under new ids and paths
(`/copy-<k>/…`), chunk texts and vectors included, through the storage port until the project
holds at least --chunks chunks. Embedding 100,000 passages would take over an hour here; the
copies exercise the same index, filters and legs.

Then 200 SciFact queries run warm (limit 10) through the service call and through real HTTP
(a ``naturali serve`` process on the same store, on loopback; the even queries by httpx, what
the Python SDK uses, the odd ones by the standard library's http.client, which adds less of
its own: each client's p50 is over 100 queries in the same place), and the bare parts run on the
same data: query embedding (the query embedded as a passage is, and as a search embeds it —
with MiniLM the exact model and its int8 query model, with bge-small the one model without and
with its query instruction; two bare sums, two ratios), numpy exact cosine over the whole
matrix with a top-100 selection, and a bm25s query (timed both as bm25s's ``retrieve`` and as
its scores with numpy's top-100 taken from below; the faster counts, see BM25_TOP) —
interleaved, query by query, so the
machine's drift falls on all of them alike. The vector leg's top 100 is checked against
numpy's float32 top 100 for every query (recall 1.0 expected: the int8 scan rescores in
float32 within a proven error margin, retrieval/vector_leg/vectors.py).

    python bench/search_latency.py [--data-dir DIR] [--chunks 100000] [--queries 200]
        [--database-url postgresql://…]

With --database-url the copies go to that PostgreSQL database (SciFact is read from the
SQLite store in --data-dir), the service runs on it, and the table gains the cold index load
from PostgreSQL, the index's memory, and pgvector's own exact scan for comparison.
"""

from __future__ import annotations

import os

# OpenBLAS's worker threads spin for ~0.1 s after a call by default: after the bare float32
# scan they would hold the two cores the next timed part needs. Told to sleep at once, the
# bare scan itself is as fast (9.8 vs 9.4-9.6 ms measured here) and no part pays for another.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import argparse  # noqa: E402
import atexit
import http.client
import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from beir import ensure_ingested  # noqa: E402
from common import (  # noqa: E402
    DATA,
    as_written,
    median,
    percentile,
    queries,
    save_copy,
    service,
    stored_chunks,
)
from naturali.service.requests import SearchRequest  # noqa: E402


def build(
    source: Any, source_user: Any, source_project: str, naturali: Any, user: Any, target: int
) -> str:
    """A project of ``naturali`` holding ≥ ``target`` chunks copied from ``source``."""
    for project, _ in naturali.projects.list(user):
        if project.name == f"latency-{target}":
            return str(project.id)
    project, _ = naturali.projects.create(user, f"latency-{target}")
    docs = stored_chunks(source, source_user, source_project)
    total, copy = 0, 0
    while total < target:
        for doc, chunks in docs:
            save_copy(naturali, doc, as_written(chunks), project.id, f"/copy-{copy}{doc.path}")
            total += len(chunks)
        copy += 1
        print(f"\r  {total} chunks", end="", flush=True)
    print()
    return str(project.id)


HTTPX = "naturali HTTP call (httpx)"
BM25_RETRIEVE = "bm25s query (k=100)"
# bm25s's retrieve takes its top k from above (np.argpartition(scores, -k)): with numpy 2.4 on
# an AVX-512 (Zen 4) VM, over an array of mostly equal scores (the zeros of chunks without a
# query term), that took 17.8 ms where the same selection from below (of -scores) took 1.2.
# The bare lexical part is the faster of the two rows, so that no part is slow by accident.
BM25_TOP = "bm25s scores + top-100 (from below)"
LEAN = "naturali HTTP call (http.client)"


def timed(fn: Any, items: list[Any]) -> list[float]:
    out = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - started) * 1000)
    return out


def interleaved(parts: dict[str, Any], count: int) -> dict[str, list[float]]:
    """Each part timed on query i before any part moves to query i + 1, so drift in the
    machine's speed (±25% within an hour here) falls on every part alike."""
    times: dict[str, list[float]] = {name: [] for name in parts}
    for i in range(count):
        for name, fn in parts.items():
            started = time.perf_counter()
            fn(i)
            times[name].append((time.perf_counter() - started) * 1000)
    return times


def serve(naturali: Any, database_url: str | None) -> tuple[str, Any]:
    """A real ``naturali serve`` on the same store, in its own process (a client in the
    server's process would take the server's GIL), its index loaded before timing starts."""
    from load import start_server

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from server import free_port

    port = free_port()
    settings = naturali.settings
    extra = {"NATURALI_QUERY_VECTOR_CACHE_ENTRIES": "0"}
    if database_url:
        extra["NATURALI_DATABASE_URL"] = database_url
        extra["NATURALI_CACHE_DIR"] = str(settings.local_cache_dir)
    owner = secrets.token_urlsafe(32)  # unused: the store has its owner already
    process = start_server(None, settings.data_dir, port, owner, extra)
    # Stopped at exit too, so a run that fails after this (a missing bench extra) leaves no
    # server behind; after main's own terminate and wait this does nothing.
    atexit.register(process.terminate)
    return f"http://127.0.0.1:{port}", process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DATA / "scifact")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()

    # No query vector cache: every timed search embeds its query, as a first-time query does.
    naturali, user = service(args.data_dir, query_vector_cache_entries=0)
    source = ensure_ingested(naturali, user, args.corpus, None)
    if args.database_url:
        scifact, scifact_user = naturali, user
        naturali, user = service(None, args.database_url, query_vector_cache_entries=0)
        project_id = build(scifact, scifact_user, source, naturali, user, args.chunks)
        scifact.close()
    else:
        project_id = build(naturali, user, source, naturali, user, args.chunks)
    texts = list(queries(args.corpus).values())[: args.queries]
    embedder = naturali.embedder()

    started = time.perf_counter()
    with naturali.indexes.synced(project_id) as index:
        n = index.n
        matrix = index.vectors.leading(n).copy()
        seqs = [int(s) for s in index.seqs[:n]]
        memory = index.memory_bytes()
    print(
        f"{n} chunks; index loaded in {time.perf_counter() - started:.1f} s "
        f"(from a snapshot when one was saved, else from every chunk), "
        f"{memory / 2**20:.0f} MiB in memory"
    )

    def service_call(q: str) -> None:
        naturali.search.search(user, project_id, SearchRequest(query=q, include_memories=False))

    import httpx

    base_url, server = serve(naturali, args.database_url)
    token = naturali.users.new_token(user.id)
    http_client = httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=300
    )

    def http_call(q: str) -> None:
        r = http_client.post(
            f"/v1/projects/{project_id}/knowledge/search",
            json={"query": q, "include_memories": False},
        )
        r.raise_for_status()

    # The same request by a client that adds little of its own: httpx (what the Python SDK
    # uses) spends ~1 ms more per call than the standard library's http.client here, cold.
    address = urlsplit(base_url)
    lean = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port)
    lean_headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def lean_call(q: str) -> None:
        body = json.dumps({"query": q, "include_memories": False})
        lean.request("POST", f"/v1/projects/{project_id}/knowledge/search", body, lean_headers)
        response = lean.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}")

    import bm25s

    corpus_texts = [c.text for c in naturali.storage.get_chunks(project_id, seqs).values()]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus_texts, stopwords="en", show_progress=False), show_progress=False
    )
    vectors = np.vstack([embedder.embed_query(t) for t in texts])  # what a search embeds
    recall = _recall(naturali, project_id, matrix, vectors)
    print(f"vector top-100 recall against float32 exact, {len(texts)} queries: {recall:.4f}")

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

    def bm25_scores(q: str) -> None:
        """bm25s's own scores, then the top 100 taken from below (see BM25_TOP)."""
        terms = bm25s.tokenize([q], stopwords="en", show_progress=False, return_ids=False)[0]
        scores = retriever.get_scores(terms)
        top = np.argpartition(-scores, 100)[:100]
        top[np.argsort(-scores[top])]

    for fn in (service_call, http_call, lean_call):  # warm (the server loads its query model)
        for text in texts[:20]:
            fn(text)
    extra = {}
    if args.database_url:
        extra["pgvector exact scan, top-100"] = _pgvector(args.database_url, project_id, vectors)
        lean.close()  # idle past the server's keep-alive meanwhile: connect again, untimed
        lean_call(texts[0])
    rows = interleaved(
        {
            "query embedding (as a passage)": lambda i: embedder.embed([texts[i]]),
            "numpy exact cosine + top-100": cosine,
            BM25_RETRIEVE: lambda i: bm25(texts[i]),
            BM25_TOP: lambda i: bm25_scores(texts[i]),
            "query embedding (as a search)": lambda i: embedder.embed_query(texts[i]),
            "naturali service call": lambda i: service_call(texts[i]),
            # Each query by one of the two clients in turn, so both sit in the same place.
            "naturali HTTP call": lambda i: (lean_call if i % 2 else http_call)(texts[i]),
        },
        len(texts),
    )
    by_client = rows.pop("naturali HTTP call")
    rows[HTTPX] = by_client[0::2]
    rows[LEAN] = by_client[1::2]
    rows.update(extra)
    print(f"\n{len(texts)} queries, warm, {n} chunks (ms)")
    print(f"{'':36} {'p50':>7} {'p95':>7}")
    for name, values in rows.items():
        print(f"{name:36} {median(values):7.2f} {percentile(values, 95):7.2f}")
    lexical = min(median(rows[BM25_RETRIEVE]), median(rows[BM25_TOP]))  # the faster one counts
    scans = median(rows["numpy exact cosine + top-100"]) + lexical
    print(f"\nembedding model: {embedder.model_id}")
    for way in ("as a passage", "as a search"):
        bare = median(rows[f"query embedding ({way})"]) + scans
        print(f"\nbare sum (query embedding {way} + cosine + bm25s) p50 {bare:.2f} ms")
        print(f"  service p50 / bare sum  {median(rows['naturali service call']) / bare:.2f}")
        print(f"  HTTP p50 / bare sum     {median(rows[HTTPX]) / bare:.2f} (httpx)")
        print(f"                          {median(rows[LEAN]) / bare:.2f} (http.client)")
    server.terminate()
    server.wait(timeout=120)
    naturali.close()


def _recall(naturali: Any, project_id: str, matrix: Any, vectors: Any, k: int = 100) -> float:
    """Share of the float32 top k's scores that the index's int8 scan + rescoring returns
    (by score, so rows tied with the k-th count either way)."""
    found = 0
    with naturali.indexes.synced(project_id) as index:
        mask = index.live_rows.copy()
        for vector in vectors:
            exact = np.sort(matrix @ vector)[::-1][:k]
            got = index.vectors.nearest(vector, mask, k).cosines
            found += int(np.sum(np.isclose(np.sort(got)[::-1], exact, atol=1e-6)))
    return found / (k * len(vectors))


def _pgvector(url: str, project_id: str, vectors: Any) -> list[float]:
    """pgvector's exact cosine scan of the project (not what naturali ranks with)."""
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url) as conn:
        register_vector(conn)
        return timed(
            lambda v: conn.execute(
                "SELECT seq FROM chunks WHERE project_id = %s ORDER BY vector <=> %s LIMIT 100",
                (project_id, v),
            ).fetchall(),
            list(vectors[:50]),
        )


if __name__ == "__main__":
    main()

"""How every cost grows with a project's size: curves over 10k–1M chunks, in one run.

Each size is its own data dir (``<data-dir>/scale-<n>``) holding one project of at least n
chunks: SciFact's chunks as naturali ingested them (text and vectors, read from the SciFact
store in ``--scifact-dir``, ingested there first if needed), copied until the size is reached.
Copy k > 0 is perturbed so that it is not the same collection again: each vector gets
Gaussian noise (σ 0.01 a dimension, then unit length again: cosine ~0.98 to its original),
and each text loses one word in eight (a seeded choice per copy), so terms' document
frequencies and chunk lengths spread as a larger corpus's would rather than repeat exactly.
Every document's path starts with a bucket, ``/b<NN>/`` (its id's hash mod 100), so a path
filter can select 1% (``/b00/``) or 30% (``/b00/`` … ``/b29/``) of any size.

For each size it prints: the copy rate (chunks written a second, vectors given: embedding is
~26 ms a chunk here whatever the size, bench/ingest.py), the index's cold load from the store
and again from its snapshot, search p50/p95 through the service and through HTTP (documents
only; then filtered to 1% and 30%), the vector leg's top-k recall against float32 exact, the
index's bytes a chunk (vectors, lexical, bookkeeping), a fresh server's restart-to-ready, and
its RSS after its searches, whole and a chunk's share (less an empty server's RSS after one
search: the models and the runtime). Then each cost's exponent (a least-squares fit of log cost on
log size; 1 is linear) and, last, exactly:

    scale: sizes=<n,...> bytes_per_chunk=<RSS a chunk at the largest, less an empty server's>
    p50_growth=<service p50 largest / smallest> recall=<least recall@k>

    python bench/scale.py [--sizes 10000,100000,300000] [--data-dir DIR] [--scifact-dir DIR]
        [--queries 300] [--database-url postgresql://…]

1M chunks take ~3 GB per process and ~20 min to build here: run it by hand
(``--sizes 10000,100000,300000,1000000``). With --database-url each size's project goes to a
fresh database of that server (``<url>_<n>`` is created), the data dirs hold the rest.
With it each size also measures the database leg (pgvector HNSW, ``database_vector_rows``):
its index build time, its recall@k against float32 exact and its service p50. RSS is split into
RssFile (the mapped snapshot's pages, shared page cache) and RssAnon (the process's own).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # as bench/search_latency.py

import argparse  # noqa: E402
import gc  # noqa: E402
import hashlib  # noqa: E402
import math  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from beir import ensure_ingested  # noqa: E402
from common import (  # noqa: E402
    DATA,
    median,
    percentile,
    qrels,
    queries,
    save_copy,
    service,
    stored_chunks,
)
from load import start_server  # noqa: E402
from naturali.ids import new_id  # noqa: E402
from naturali.model import ChunkDraft  # noqa: E402
from naturali.ports.storage import EmbeddedChunk  # noqa: E402
from naturali.retrieval.vector_leg.stored_vectors import StoredVectors  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402

NOISE = 0.01
DROP_EVERY = 8
K = 10


@dataclass
class Row:
    size: int
    figures: dict[str, float] = field(default_factory=dict)


def bucket(doc_id: str) -> str:
    return f"/b{int(hashlib.sha256(doc_id.encode()).hexdigest(), 16) % 100:02d}"


def perturbed(vector: bytes, text: str, rng: np.random.Generator) -> tuple[bytes, str]:
    v = np.frombuffer(vector, np.float32)
    v = v + rng.normal(0, NOISE, v.size).astype(np.float32)
    words = text.split(" ")
    kept = [w for i, w in enumerate(words) if i == 0 or rng.integers(DROP_EVERY) != 0]
    return (v / np.linalg.norm(v)).astype(np.float32).tobytes(), " ".join(kept)


def build(
    source: Any, source_user: Any, source_project: str, target: Any, user: Any, n: int
) -> tuple[str, int]:
    """The scale project of ``target`` (made with ≥ n chunks when missing): its id, and how
    many chunks were written now (0: it was there)."""
    for project, _ in target.projects.list(user):
        if project.name == "scale":
            return str(project.id), 0
    project, _ = target.projects.create(user, "scale")
    docs = stored_chunks(source, source_user, source_project)
    total, copy = 0, 0
    started = time.perf_counter()
    while total < n:
        rng = np.random.default_rng(copy)
        for doc, chunks in docs:
            copied = []
            for c in chunks:
                vector, text = (c.vector, c.text) if copy == 0 else perturbed(c.vector, c.text, rng)
                copied.append(
                    EmbeddedChunk(ChunkDraft(c.ordinal, text, 0, len(text), c.page), vector)
                )
            doc_id = new_id("doc")
            path = f"{bucket(doc_id)}/copy-{copy}{doc.path}"
            save_copy(target, doc, copied, project.id, path, doc_id)
            total += len(copied)
            if total >= n:
                break
        copy += 1
        print(f"\r  {total} chunks", end="", flush=True)
    print(f"  ({total / (time.perf_counter() - started):.0f} chunks/s)")
    return str(project.id), total


def measure(
    args: argparse.Namespace, n: int, source: tuple[Any, Any, str], texts: list[str]
) -> Row:
    row = Row(n)
    data_dir = args.data_dir / f"scale-{n}"
    url = _sized(args.database_url, n) if args.database_url else None
    if url:
        _create_database(args.database_url, url)
    naturali, user = service(data_dir, url, query_vector_cache_entries=0)
    started = time.perf_counter()
    project_id, built = build(*source, naturali, user, n)
    if built:
        row.figures["copy chunks/s"] = built / (time.perf_counter() - started)
    naturali.indexes.reset()  # no snapshot: the first load reads every chunk
    started = time.perf_counter()
    with naturali.indexes.synced(project_id) as index:
        chunks = index.n
    row.figures["cold load from the store s"] = time.perf_counter() - started
    naturali.close()  # saves the index's snapshot
    del naturali, index
    # What the cold load left (a million chunks' objects) collected now, not inside the timings
    # below: a server that starts from its snapshot never had it.
    gc.collect()
    naturali, user = service(data_dir, url, query_vector_cache_entries=0)
    started = time.perf_counter()
    with naturali.indexes.synced(project_id) as index:
        row.figures["cold load from its snapshot s"] = time.perf_counter() - started
        row.figures["vector bytes/chunk"] = index.vectors.nbytes / chunks
        row.figures["lexical bytes/chunk"] = index.lexical.memory_bytes() / chunks
        rest = index.memory_bytes() - index.vectors.nbytes - index.lexical.memory_bytes()
        row.figures["bookkeeping bytes/chunk"] = rest / chunks
        row.figures["mapped bytes/chunk"] = index.mapped_bytes() / chunks
        row.figures["recall@k"] = _recall(naturali, index, texts, index.vectors)
    _searches(naturali, user, project_id, texts, row)
    if url:
        _database_leg(naturali, project_id, texts, row)
    naturali.close()
    if url:
        stored, user = service(data_dir, url, query_vector_cache_entries=0, database_vector_rows=1)
        _searches(stored, user, project_id, texts, row, "database leg ")
        stored.close()
    _server(data_dir, url, project_id, texts, row, chunks)
    return row


def _database_leg(naturali: Any, project_id: str, texts: list[str], row: Row) -> None:
    """The vector leg answered by PostgreSQL (pgvector HNSW): its index's build, and its
    recall against float32 exact beside the server's own leg's."""
    search = naturali.storage.vector_search()
    with naturali.indexes.synced(project_id) as index:
        model_id, dimension = index.model_id, index.dimension
    started = time.perf_counter()
    search.index_vectors(project_id, model_id, dimension)
    row.figures["database index build s"] = time.perf_counter() - started
    with naturali.indexes.synced(project_id) as index:
        leg = StoredVectors(search, index)
        row.figures["database leg recall@k"] = _recall(naturali, index, texts, leg)


def _searches(
    naturali: Any, user: Any, project_id: str, texts: list[str], row: Row, leg: str = ""
) -> None:
    for name, paths in (
        ("", None),
        (" 1%", ["/b00/"]),
        (" 30%", [f"/b{i:02d}/" for i in range(30)]),
    ):
        took = []
        for text in texts:
            request = SearchRequest(query=text, include_memories=False, document_paths=paths)
            started = time.perf_counter()
            naturali.search.search(user, project_id, request)
            took.append((time.perf_counter() - started) * 1000)
        row.figures[f"{leg}service p50{name} ms"] = median(took)
        row.figures[f"{leg}service p95{name} ms"] = percentile(took, 95)


def _server(
    data_dir: Path, url: str | None, project_id: str, texts: list[str], row: Row, n: int
) -> None:
    """A fresh ``naturali serve`` on the size's store: restart-to-ready, HTTP p50, RSS."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from server import free_port

    port, owner = free_port(), secrets.token_urlsafe(32)
    extra = {"NATURALI_QUERY_VECTOR_CACHE_ENTRIES": "0"}
    if url:
        extra["NATURALI_DATABASE_URL"] = url
    started = time.perf_counter()
    process = start_server(None, data_dir, port, owner, extra)
    base = f"http://127.0.0.1:{port}"
    while httpx.get(f"{base}/readyz").status_code != 200:
        time.sleep(0.05)
    row.figures["restart to ready s"] = time.perf_counter() - started
    token = (data_dir / "owner-token").read_text().strip()
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
        took = []
        for text in texts:
            body = {"query": text, "include_memories": False}
            started = time.perf_counter()
            r = http.post(f"/v1/projects/{project_id}/knowledge/search", json=body)
            r.raise_for_status()
            took.append((time.perf_counter() - started) * 1000)
    row.figures["HTTP p50 ms"] = median(took)
    row.figures["HTTP p95 ms"] = percentile(took, 95)
    row.figures["server RSS MiB"] = _rss(process.pid) / 2**20
    row.figures["server RSS bytes/chunk"] = (_rss(process.pid) - _empty_rss(data_dir)) / n
    # Of it, pages of the snapshot's files (the page cache's, shared by a host's processes)
    # and the process's own.
    row.figures["server RssFile MiB"] = _rss(process.pid, "RssFile") / 2**20
    row.figures["server RssAnon MiB"] = _rss(process.pid, "RssAnon") / 2**20
    process.terminate()
    process.wait(timeout=120)


def _rss(pid: int, kind: str = "VmRSS") -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split(f"{kind}:")[1].split()[0]) * 1024


_EMPTY: list[int] = []


def _empty_rss(data_dir: Path) -> int:
    """RSS of a server on an empty store after one search (the models, the runtime): what
    a chunk's share is counted above. Measured once."""
    if not _EMPTY:
        from server import free_port

        empty = data_dir.parent / "scale-empty"
        shutil.rmtree(empty, ignore_errors=True)  # a first start: its owner is this token
        port, owner = free_port(), secrets.token_urlsafe(32)
        process = start_server(None, empty, port, owner, {})
        headers = {"Authorization": f"Bearer {owner}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as http:
            project = http.post("/v1/projects", json={"name": "empty"}).json()["id"]
            body = {"query": "warm the models", "include_memories": False}
            http.post(f"/v1/projects/{project}/knowledge/search", json=body).raise_for_status()
        _EMPTY.append(_rss(process.pid))
        process.terminate()
        process.wait(timeout=120)
    return _EMPTY[0]


def _recall(naturali: Any, index: Any, texts: list[str], leg: Any) -> float:
    """Share of the float32 exact top k's cosines the vector ``leg`` returns."""
    mask = index.live_rows.copy()
    found = total = 0
    for text in texts:
        vector = np.asarray(naturali.embedder().embed_query(text), np.float32).ravel()
        exact = np.sort(index.vectors.leading(index.n)[mask] @ vector)[::-1][:K]
        got = np.sort(leg.scan(mask, K).nearest(vector).cosines)[::-1]
        found += int(np.sum(np.isclose(got, exact, atol=1e-5)))
        total += K
    return found / total


def _sized(url: str, n: int) -> str:
    """``url`` with ``_<n>`` after its database's name (before any query string)."""
    base, _, query = url.partition("?")
    return f"{base}_{n}" + (f"?{query}" if query else "")


def _create_database(admin_url: str, url: str) -> None:
    import psycopg

    name = url.partition("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def exponent(sizes: list[int], values: list[float]) -> float:
    """The slope of log value on log size (least squares)."""
    x, y = np.log(sizes), np.log(np.maximum(values, 1e-12))
    return float(np.polyfit(x, y, 1)[0]) if len(sizes) > 1 else math.nan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,300000")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/naturali-scale"))
    parser.add_argument("--scifact-dir", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    scifact, scifact_user = service(args.scifact_dir)
    source = (scifact, scifact_user, ensure_ingested(scifact, scifact_user, DATA / "scifact", None))
    # The test split's queries (SciFact has 300): the recall is over all of them.
    judged = qrels(DATA / "scifact", "test")
    texts = [t for q, t in queries(DATA / "scifact").items() if q in judged][: args.queries]
    rows = [measure(args, n, source, texts) for n in sizes]
    scifact.close()
    names = list(rows[0].figures)
    print(f"\n{'chunks':32}" + "".join(f"{r.size:>12}" for r in rows) + f"{'exponent':>10}")
    for name in names:
        values = [r.figures[name] for r in rows]
        slope = exponent(sizes, values)
        print(f"{name:32}" + "".join(f"{v:12.3f}" for v in values) + f"{slope:10.2f}")
    largest, smallest = rows[-1].figures, rows[0].figures
    growth = largest["service p50 ms"] / smallest["service p50 ms"]
    recall = min(r.figures["recall@k"] for r in rows)
    print(
        f"scale: sizes={','.join(map(str, sizes))} "
        f"bytes_per_chunk={largest['server RSS bytes/chunk']:.0f} "
        f"p50_growth={growth:.2f} recall={recall:.4f}"
    )


if __name__ == "__main__":
    main()

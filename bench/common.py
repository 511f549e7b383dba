"""Shared helpers for the benchmarks: BEIR loading, a throwaway service, timing."""

from __future__ import annotations

import json
import os
import resource
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from naturali.compose import build_services
from naturali.ids import new_id
from naturali.model import Chunk, ChunkDraft, Document, SourceType, User, utcnow
from naturali.ports.storage import EmbeddedChunk
from naturali.service.container import Services
from naturali.service.corpus.documents import Upload
from naturali.settings import Settings

# The evaluation collections: shared/data beside the checkout, or NATURALI_BENCH_DATA.
DATA = Path(
    os.environ.get("NATURALI_BENCH_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


def corpus(path: Path) -> Iterator[dict[str, str]]:
    with (path / "corpus.jsonl").open() as fh:
        for line in fh:
            yield json.loads(line)


def queries(path: Path) -> dict[str, str]:
    with (path / "queries.jsonl").open() as fh:
        return {q["_id"]: q["text"] for q in map(json.loads, fh)}


def qrels(path: Path, split: str = "test") -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with (path / "qrels" / f"{split}.tsv").open() as fh:
        next(fh)
        for line in fh:
            qid, did, rel = line.rstrip("\n").split("\t")
            out.setdefault(qid, {})[did] = int(rel)
    return out


def as_upload(doc: dict[str, str], prefix: str = "/corpus/") -> Upload:
    title = doc.get("title", "").strip()
    text = (f"# {title}\n\n" if title else "") + doc.get("text", "")
    return Upload(text.encode(), f"{doc['_id']}.md", f"{prefix}{doc['_id']}.md", title or None)


def service(
    data_dir: Path | None = None, database_url: str | None = None, **settings: Any
) -> tuple[Services, User]:
    directory = data_dir or Path(tempfile.mkdtemp(prefix="naturali-bench-"))
    naturali = build_services(Settings(data_dir=directory, database_url=database_url, **settings))
    naturali.bootstrap()
    user = naturali.storage.oldest_user()
    assert user is not None
    loaded = getattr(naturali.embedder(), "query_model_loaded", None)
    if loaded is not None:  # measure the queries the product embeds: by the int8 query model
        loaded.wait()
    return naturali, user


def project_documents(naturali: Services, user: User, project_id: str) -> list[Document]:
    """Every document of a project, following the list's pages."""
    docs: list[Document] = []
    cursor = None
    while True:
        page = naturali.documents.list(user, project_id, cursor=cursor, limit=100)
        docs += page.documents
        cursor = page.next_cursor
        if not cursor:
            return docs


def stored_chunks(
    naturali: Services, user: User, project_id: str
) -> list[tuple[Document, list[Chunk]]]:
    """A project's documents with their chunks as stored (text and vectors): what the
    benches copy into larger projects instead of embedding them again."""
    documents = project_documents(naturali, user, project_id)
    owner_chunks = naturali.storage.owner_chunks
    return [(d, owner_chunks(project_id, SourceType.DOCUMENT, [d.id])) for d in documents]


def as_written(chunks: list[Chunk]) -> list[EmbeddedChunk]:
    """Stored chunks as a new version's chunks, their vectors given."""
    return [
        EmbeddedChunk(ChunkDraft(c.ordinal, c.text, c.start, c.end, c.page), c.vector)
        for c in chunks
    ]


def save_copy(
    naturali: Services,
    doc: Document,
    chunks: list[EmbeddedChunk],
    project_id: str,
    path: str,
    doc_id: str | None = None,
) -> None:
    """``doc`` written again, under a new id (or ``doc_id``), into ``project_id`` at ``path``
    with ``chunks``: nothing is embedded."""
    fields = {**doc.__dict__, "id": doc_id or new_id("doc"), "project_id": project_id}
    fields.update(path=path, created_at=utcnow())
    model = naturali.embedder().model_id
    naturali.storage.save_document_version(Document(**fields), chunks, model, create=True)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def median(values: list[float]) -> float:
    return statistics.median(values)

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
from naturali.model import Document, User
from naturali.service.container import Services
from naturali.service.documents import Upload
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


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def median(values: list[float]) -> float:
    return statistics.median(values)

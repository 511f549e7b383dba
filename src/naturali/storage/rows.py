"""Rows of the catalog as domain records, for every SQL adapter (a row is anything indexed
by column name: ``sqlite3.Row`` or a psycopg dict row)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from naturali.ids import new_id
from naturali.model import (
    Chunk,
    ChunkDraft,
    Document,
    IngestJob,
    IngestJobStatus,
    IngestProgress,
    Memory,
    MemoryStore,
    Source,
    SourceType,
    utcnow,
)
from naturali.ports.state import JournalEntry, PlannedWrite, SessionRow
from naturali.ports.storage import EmbeddedChunk


class Row(Protocol):
    """A row indexed by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


# A document with its current version, joined as the backend's keys say
# (``Dialect.current_version``).
DOC_SELECT = """
    SELECT d.*, v.file_id, v.filename, v.size, v.content_type, v.content_hash,
           v.chunk_count, v.page_count, v.warnings, v.reading
    FROM documents d JOIN document_versions v ON {current}
"""


def document(row: Row) -> Document:
    return Document(
        id=row["id"],
        project_id=row["project_id"],
        path=row["path"],
        title=row["title"],
        metadata=json.loads(row["metadata"]),
        tags=json.loads(row["tags"]),
        version=row["version"],
        file_id=row["file_id"],
        filename=row["filename"],
        size=row["size"],
        content_type=row["content_type"],
        content_hash=row["content_hash"],
        chunk_count=row["chunk_count"],
        page_count=row["page_count"],
        warnings=json.loads(row["warnings"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        reading=json.loads(row["reading"]) if row["reading"] else None,
    )


def document_fields(d: Document) -> tuple[str, str, str, str]:
    """The columns a document's version writes, as they are stored (``document`` reads them
    back): path, title, metadata and tags, the last two as JSON."""
    return d.path, d.title, json.dumps(d.metadata), json.dumps(d.tags)


VERSION_COLUMNS = (
    "document_id, version, file_id, filename, size, content_type, content_hash, chunk_count, "
    "page_count, warnings, created_at, reading"
)


def version_row(d: Document) -> tuple[Any, ...]:
    """A document's new version as ``VERSION_COLUMNS`` store it."""
    reading = json.dumps(d.reading) if d.reading is not None else None
    return (
        *(d.id, d.version, d.file_id, d.filename, d.size, d.content_type, d.content_hash),
        *(d.chunk_count, d.page_count, json.dumps(d.warnings), d.updated_at, reading),
    )


CHUNK_COLUMNS = (
    "id, project_id, source_type, owner_id, version, ordinal, page, start_offset, end_offset, "
    "text, vector, model, context"
)


@dataclass(frozen=True)
class ChunkOwner:
    """Whose chunks: a document's version or a memory's revision, in a project."""

    project_id: str
    source_type: SourceType
    owner_id: str
    version: int


def chunk_rows(
    owner: ChunkOwner,
    chunks: Sequence[EmbeddedChunk],
    model_id: str,
    vector: Callable[[bytes], Any],
) -> list[tuple[Any, ...]]:
    """New chunks as ``CHUNK_COLUMNS`` store them, each vector as its backend takes it."""
    o = owner
    return [
        (
            *(new_id("chunk"), o.project_id, str(o.source_type), o.owner_id, o.version),
            *(c.draft.ordinal, c.draft.page, c.draft.start, c.draft.end, c.draft.text),
            *(vector(c.vector), model_id, c.draft.context),
        )
        for c in chunks
    ]


# Every chunk column but the vector: what a chunk is read for outside the index (its text and
# provenance). The vector is 1.5 KiB a row; reading it for a search's ten hits took SQLite
# 0.4-0.7 ms against ~0.1 without, PostgreSQL ~0.9 against ~0.5 (100k chunks here).
CHUNK_TEXT_COLUMNS = (
    "seq, id, project_id, source_type, owner_id, version, ordinal, text, start_offset, "
    "end_offset, page, model, context"
)


def chunk(row: Row, *, with_vector: bool = True) -> Chunk:
    """A chunk row; ``with_vector=False`` for a row of ``CHUNK_TEXT_COLUMNS`` (its vector is
    left empty)."""
    return Chunk(
        seq=row["seq"],
        id=row["id"],
        project_id=row["project_id"],
        source_type=SourceType(row["source_type"]),
        owner_id=row["owner_id"],
        version=row["version"],
        ordinal=row["ordinal"],
        text=row["text"],
        start=row["start_offset"],
        end=row["end_offset"],
        page=row["page"],
        vector=vector_bytes(row["vector"]) if with_vector else b"",
        model=row["model"],
        context=row["context"],
    )


def store(row: Row) -> MemoryStore:
    return MemoryStore(
        id=row["id"],
        project_id=row["project_id"],
        name=row["name"],
        tags=json.loads(row["tags"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def memory(row: Row) -> Memory:
    return Memory(
        id=row["id"],
        project_id=row["project_id"],
        memory_store_id=row["memory_store_id"],
        title=row["title"],
        content=row["content"],
        tags=json.loads(row["tags"]),
        revision=row["revision"],
        content_hash=row["content_hash"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def vector_bytes(vector: Any) -> bytes:
    """A vector as float32 bytes: SQLite stores them so; pgvector returns an array."""
    if isinstance(vector, bytes | memoryview):
        return bytes(vector)
    array = vector.to_numpy() if hasattr(vector, "to_numpy") else vector  # pgvector's Vector
    return bytes(array.astype("float32").tobytes())


JOB_COLUMNS = "id, project_id, document_id, state, payload, chunks_total, pages_total, created_at"


def job_insert(placeholder: str) -> str:
    """The INSERT of a queued job, one ``placeholder`` for each of ``JOB_COLUMNS``."""
    marks = ", ".join([placeholder] * len(JOB_COLUMNS.split(",")))
    return f"INSERT INTO ingest_jobs ({JOB_COLUMNS}) VALUES ({marks})"


def job_row(job: IngestJob) -> tuple[Any, ...]:
    """A queued job's columns, in ``JOB_COLUMNS``' order."""
    d = job.document
    payload = job_payload(job)
    return (
        job.id,
        d.project_id,
        d.id,
        "queued",
        payload,
        len(job.drafts),
        len(job.ocr_pages),
        utcnow(),
    )


def job_payload(job: IngestJob) -> str:
    """What a job carries, as JSON: the document as it will be, and its chunks' drafts."""
    drafts = [d.as_list() for d in job.drafts]
    document = job.document.__dict__
    return json.dumps({"document": document, "drafts": drafts, "ocr_pages": job.ocr_pages})


def ingest_job(row: Row) -> IngestJob:
    payload = json.loads(row["payload"])
    return IngestJob(
        id=row["id"],
        document=Document(**payload["document"]),
        drafts=[ChunkDraft(*d) for d in payload["drafts"]],
        ocr_pages=payload.get("ocr_pages", []),
        state=row["state"],
        chunks_done=row["chunks_done"],
        error=json.loads(row["error"]) if row["error"] else None,
        created_at=row["created_at"],
    )


def job_counts(rows: Iterable[Row]) -> dict[str, int]:
    """Jobs by state (``state``, ``n`` rows), every state present."""
    counts = {state: 0 for state in ("queued", "running", "failed")}
    for row in rows:
        counts[row["state"]] = int(row["n"])
    return counts


def ingest_job_status(row: Row) -> IngestJobStatus:
    progress = ingest_progress(row)
    return IngestJobStatus(
        row["id"],
        row["document_id"],
        row["path"],
        progress.state,
        progress.chunks_total,
        progress.chunks_done,
        progress.error,
        row["created_at"],
        progress.pages_total,
        progress.pages_done,
    )


def ingest_progress(row: Row) -> IngestProgress:
    error = row["error"]
    return IngestProgress(
        state=row["state"],
        chunks_total=row["chunks_total"],
        chunks_done=row["chunks_done"],
        error=json.loads(error) if error else None,
        pages_total=row["pages_total"],
        pages_done=row["pages_done"],
    )


def planned_write(plan: dict[str, Any], record_id: str, revision: int) -> PlannedWrite:
    """The write of one record's revision in a mutation journal's plan (both backends)."""
    return next(
        PlannedWrite(**w)
        for w in plan["writes"]
        if w["record_id"] == record_id and w["revision"] == revision
    )


SOURCE_COLUMNS = "id, project_id, kind, spec, created_at, updated_at, next_run_at"


def source_insert(placeholder: str) -> str:
    marks = ", ".join([placeholder] * len(SOURCE_COLUMNS.split(",")))
    return f"INSERT INTO sources ({SOURCE_COLUMNS}) VALUES ({marks})"


def source_spec(s: Source) -> str:
    """A source's settings, as stored (one JSON column: they are read and written whole)."""
    fields = ("url", "ref", "folder", "path", "include", "exclude", "every_seconds")
    return json.dumps({name: getattr(s, name) for name in fields})


def source_row(s: Source) -> tuple[Any, ...]:
    """A new source's columns, in ``SOURCE_COLUMNS``' order."""
    return (s.id, s.project_id, s.kind, source_spec(s), s.created_at, s.updated_at, s.next_run_at)


def source(row: Row) -> Source:
    last_run = row["last_run"]
    return Source(
        id=row["id"],
        project_id=row["project_id"],
        kind=row["kind"],
        **json.loads(row["spec"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        last_run=json.loads(last_run) if last_run else None,
        cursor=row["cursor"],
        next_run_at=row["next_run_at"],
        requested_at=row["requested_at"],
    )


def history_row(w: PlannedWrite, request_id: str, operation: str, at: str) -> tuple[Any, ...]:
    """A record's revision as a store's history keeps it (after the store's key, if any)."""
    return (w.record_id, w.revision, request_id, operation, w.lifecycle, w.path, w.sha256, at)


def session_row(session: SessionRow, last_active_at: str, writes: int) -> tuple[Any, ...]:
    """A writing session of a store as its activity keeps it (after the store's key)."""
    s = session
    return (s.session_id, s.pid, s.host, s.started_at, last_active_at, writes)


def mutation_row(entry: JournalEntry, plan: str) -> tuple[Any, ...]:
    """A journaled mutation's identity, plan and times (after the store's key, if any)."""
    e = entry
    return (e.request_id, e.operation, e.args_hash, plan, e.created_at, e.created_at)


MEMORY_COLUMNS = (
    "id, project_id, memory_store_id, title, content, tags, revision, content_hash, file_path, "
    "created_at, updated_at"
)


def memory_row(m: Memory, path: str) -> tuple[Any, ...]:
    """A memory as ``MEMORY_COLUMNS`` store it, its record at ``path``."""
    return (
        *(m.id, m.project_id, m.memory_store_id, m.title, m.content, json.dumps(m.tags)),
        *(m.revision, m.content_hash, path, m.created_at, m.updated_at),
    )

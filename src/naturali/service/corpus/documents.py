"""Documents: ingest (extract → chunk → embed → one transaction), versions, list, delete."""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeGuard

import numpy as np

from naturali.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
)
from naturali.ids import new_id
from naturali.ingest import isolated
from naturali.model import (
    Chunk,
    ChunkDraft,
    Document,
    IngestJob,
    IngestProgress,
    ProjectUsage,
    SourceType,
    User,
    utcnow,
)
from naturali.ports.embedder import Embedder
from naturali.ports.storage import DocumentPathTaken, EmbeddedChunk, Storage, VersionConflict
from naturali.service import validation
from naturali.service.cursors import check_limit, decode_cursor, encode_cursor
from naturali.service.platform import grants
from naturali.service.platform.auth import Auth
from naturali.service.platform.quotas import Quotas
from naturali.service.requests import MAX_PASSAGES
from naturali.text.context import in_context
from naturali.vault.files import atomic_write

# A version of at most this many chunks is embedded in its request (~0.2 s on 2 cores) and
# answered 201 ready; a larger one is queued (service/corpus/ingestion.py) and answered 202.
INLINE_CHUNKS = 8
SECONDS_A_CHUNK = 0.03  # embedding one chunk on 2 cores: the 429's Retry-After


@dataclass(frozen=True)
class Upload:
    """A new document or version, as every interface hands it over."""

    data: bytes
    filename: str | None = None
    path: str | None = None
    title: str | None = None
    metadata: dict[str, Any] | None = None
    tags: dict[str, str] | None = None


@dataclass(frozen=True)
class _Prepared:
    """A version ready to embed and write."""

    document: Document
    data: bytes
    drafts: builtins.list[ChunkDraft]
    create: bool
    ocr_pages: builtins.list[int]  # to read by OCR in the background job before embedding


@dataclass(frozen=True)
class DocumentPage:
    documents: builtins.list[Document]
    next_cursor: str | None


@dataclass(frozen=True)
class PassagePage:
    """A run of a document's passages, in order: the first's place among them all, and how
    many there are."""

    passages: builtins.list[Chunk]
    start: int
    total: int
    ocr_pages: frozenset[int] = frozenset()  # the pages read by OCR

    def read_by(self, chunk: Chunk) -> Literal["text", "ocr"]:
        return "ocr" if chunk.page in self.ocr_pages else "text"


class Documents:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        embedder: Callable[[str], Embedder],  # a project's (its model's)
        files_dir: Path,
        max_upload_bytes: int,
        max_chunks: int,
        max_queued: int,
        queued: Callable[[], None],
        quotas: Quotas,
    ) -> None:
        self._storage = storage
        self._auth = auth
        self._embedder = embedder
        self._files = files_dir
        self._max = max_upload_bytes
        self._max_chunks = max_chunks
        self._max_queued = max_queued
        self._queued = queued  # wakes the ingestion worker
        self._quotas = quotas
        # Told each project whose chunks a commit changed (the search indexes' snapshots).
        self.after_commit: Callable[[str], None] = lambda project_id: None

    def create(self, user: User, project_id: str, upload: Upload) -> Document:
        """Ingest a new document: extract, chunk, embed and store it as version 1."""
        _writable(user, upload)
        return self._ingest(project_id, None, upload)

    def update(self, user: User, project_id: str, document_id: str, upload: Upload) -> Document:
        """A new version of a document (its chunks replaced in one transaction)."""
        current = self._get(user, project_id, document_id)
        _writable(user, upload)
        return self._ingest(project_id, current, upload)

    def mirror(self, project_id: str, current: Document | None, upload: Upload) -> Document:
        """A version written by a source's sync (service/syncing/source_sync.py): the source's
        editor was checked when it was made or changed; quotas and bounds hold as for any
        upload."""
        return self._ingest(project_id, current, upload)

    def get(self, user: User, project_id: str, document_id: str) -> Document:
        """One document of the project."""
        return self._with_status([self._get(user, project_id, document_id)])[0]

    def list(
        self,
        user: User,
        project_id: str,
        path_prefix: str | None = None,
        cursor: str | None = None,
        limit: int = 20,
    ) -> DocumentPage:
        """The project's documents by path (those the caller was granted), a page at a time."""
        check_limit(limit)
        if path_prefix is not None:
            validation.logical_path(path_prefix, "path_prefix", prefix=True)
        after = decode_cursor(cursor) if cursor else None
        prefixes = user.grant.paths_within((path_prefix,) if path_prefix else None)
        rows = self._storage.list_documents(project_id, prefixes, after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        cursor = encode_cursor(rows[-1].path) if more else None
        return DocumentPage(self._with_status(rows), cursor)

    def passages(
        self,
        user: User,
        project_id: str,
        document_id: str,
        *,
        around: str | None = None,
        start: int = 0,
        limit: int = 50,
    ) -> PassagePage:
        """The document's passages from ``start`` (0-based), or a run centred on the chunk
        ``around``: a hit in its context, however long the document."""
        if not 1 <= limit <= MAX_PASSAGES or start < 0:
            raise InvalidRequest(
                f"limit must be between 1 and {MAX_PASSAGES}, start at least 0",
                code="invalid_value",
                param="limit" if start >= 0 else "start",
            )
        document = self._get(user, project_id, document_id)
        chunks = self._storage.owner_chunks(project_id, SourceType.DOCUMENT, [document_id])
        if around is not None:
            at = next((i for i, c in enumerate(chunks) if c.id == around), None)
            if at is None:
                raise NotFound(
                    f"passage {around} is not in document {document_id}",
                    code="chunk_not_found",
                    param="around",
                )
            start = max(0, min(at - limit // 2, len(chunks) - limit))
        ocr = frozenset((document.reading or {}).get("ocr_pages", ()))
        return PassagePage(chunks[start : start + limit], start, len(chunks), ocr)

    def delete(self, user: User, project_id: str, document_id: str) -> None:
        """A document, its versions and its chunks."""
        self._get(user, project_id, document_id)
        self._storage.delete_document(project_id, document_id)

    def _get(self, user: User, project_id: str, document_id: str) -> Document:
        """The document, if the caller was granted its path (else it is not there for them)."""
        document = self._storage.get_document(project_id, document_id)
        if document is None or not user.grant.sees_path(document.path):
            raise NotFound(
                f"document {document_id} not found", code="document_not_found", param="document_id"
            )
        return document

    def create_many(
        self, user: User, project_id: str, uploads: builtins.list[Upload]
    ) -> builtins.list[Document]:
        """Create many documents, embedding their chunks in shared batches (bulk ingest).

        Each document is still written in its own transaction; a bad upload fails alone
        before anything is written for it.
        """
        prepared = [self._prepare(project_id, None, u) for u in uploads]
        committed = iter(self._commit([p for p in prepared if not _scanned(p)]))
        return [self._enqueue(p, None) if _scanned(p) else next(committed) for p in prepared]

    def _ingest(self, project_id: str, current: Document | None, upload: Upload) -> Document:
        prepared = self._prepare(project_id, current, upload)
        if isinstance(prepared, Document):
            return self._with_status([prepared])[0]
        adding = ProjectUsage(
            documents=0 if current else 1,
            bytes=prepared.document.size - (current.size if current else 0),
            chunks=len(prepared.drafts) - (current.chunk_count if current else 0),
            memories=0,
        )
        with self._quotas.reserve(project_id, adding):
            if len(prepared.drafts) <= INLINE_CHUNKS and not prepared.ocr_pages:
                return self._commit([prepared], urgent=True)[0]
            return self._enqueue(prepared, current)

    def _enqueue(self, prepared: _Prepared, current: Document | None) -> Document:
        """Store the file and queue the version's embedding; the document as it stands."""
        self._check_queue(prepared.document.project_id, len(prepared.drafts))
        self._store_file(prepared.document.content_hash, prepared.data)
        job = IngestJob(new_id("job"), prepared.document, prepared.drafts, prepared.ocr_pages)
        # A new document exists at once, as version 0 (no chunks), so that its path is taken
        # and its id can be followed; a new version leaves the current one searched.
        placeholder = None if current else replace(prepared.document, version=0, chunk_count=0)
        try:
            self._storage.enqueue_ingest(job, placeholder)
        except DocumentPathTaken as exc:
            raise path_taken(str(exc)) from exc
        self._queued()
        shown = current or placeholder
        assert shown is not None
        return _status(
            shown, IngestProgress("queued", len(job.drafts), 0, None, len(job.ocr_pages))
        )

    def _check_queue(self, project_id: str, chunks: int) -> None:
        """A project's queued work is bounded: beyond it, 429 until some is embedded."""
        queued = self._storage.queued_chunks(project_id)
        if queued + chunks > self._max_queued:
            wait = max(1, min(3600, int(queued * SECONDS_A_CHUNK)))
            raise TooManyRequests(
                f"the project has {queued} passages waiting to be embedded; this upload's "
                f"{chunks} would pass its {self._max_queued} (the ingest_queue_chunks "
                "setting): retry once some are ready",
                code="ingest_queue_full",
                retry_after=wait,
            )

    def _with_status(self, documents: builtins.list[Document]) -> builtins.list[Document]:
        """Each document with the state of its newest upload (ready unless a job has it).

        Those without a job are read again once their jobs were: a job's end writes the new
        version in the transaction that deletes the job, so a document read before that and
        its job looked for after would show its older version as ready."""
        project_ids = {d.project_id for d in documents}
        jobs = {
            k: v
            for p in project_ids
            for k, v in self._storage.ingest_progress(p, [d.id for d in documents]).items()
        }
        settled: dict[str, Document] = {}
        for p in project_ids:
            ids = [d.id for d in documents if d.project_id == p and d.id not in jobs]
            if ids:
                settled.update(self._storage.get_documents(p, ids))
        return [_status(settled.get(d.id, d), jobs.get(d.id)) for d in documents]

    def _prepare(
        self, project_id: str, current: Document | None, upload: Upload
    ) -> _Prepared | Document:
        """Validate, then read the file (the costly step, last); a Document back means nothing
        changed."""
        if len(upload.data) > self._max:
            raise upload_too_large(self._max)
        path = validation.logical_path(upload.path) if upload.path else None
        path = path or (current.path if current else None)
        if path is None:
            raise InvalidRequest("path is required", code="missing_field", param="path")
        filename = _filename(upload.filename or PurePosixPath(path).name)
        fields: dict[str, Any] = {
            "path": path,
            "title": validation.title(upload.title) or (current.title if current else None),
            "metadata": validation.metadata(upload.metadata)
            if upload.metadata is not None or not current
            else current.metadata,
            "tags": validation.tags(upload.tags)
            if upload.tags is not None or not current
            else current.tags,
            "content_hash": hashlib.sha256(upload.data).hexdigest(),
        }
        if current is None and self._storage.get_document_by_path(project_id, path):
            raise path_taken(path)
        # (A version-0 document has no version ready yet: its same bytes are sent again.)
        if current is not None and current.version > 0 and _unchanged(current, fields):
            return current  # idempotent per content hash: same bytes and fields, no new version
        counter = self._embedder(project_id).token_counter
        read = isolated.read(
            upload.data, filename, counter, self._max_chunks, title=fields["title"]
        )
        now = utcnow()
        document = Document(
            id=current.id if current else new_id("doc"),
            project_id=project_id,
            path=path,
            title=read.title,
            metadata=fields["metadata"],
            tags=fields["tags"],
            version=current.version + 1 if current else 1,
            file_id="file_" + fields["content_hash"][:16],
            filename=filename,
            size=len(upload.data),
            content_type=read.content_type,
            content_hash=fields["content_hash"],
            chunk_count=0,
            page_count=read.page_count,
            warnings=read.warnings,
            created_at=current.created_at if current else now,
            updated_at=now,
            reading=read.reading,
        )
        return _Prepared(document, upload.data, read.drafts, current is None, read.ocr_pending)

    def _commit(
        self, prepared: builtins.list[_Prepared | Document], *, urgent: bool = False
    ) -> builtins.list[Document]:
        """``urgent``: one upload's few passages, which its answer waits on, embedded at the
        searches' priority (a bulk ingest's wait their turn behind searches)."""
        if not prepared:
            return []
        first = prepared[0]  # all of one project
        embedder = self._embedder(
            first.document.project_id if isinstance(first, _Prepared) else first.project_id
        )
        pending = [p for p in prepared if isinstance(p, _Prepared)]
        texts = [in_context(d.text, d.context) for p in pending for d in p.drafts]
        vectors = (
            embedder.embed(texts, urgent=urgent) if texts else np.zeros((0, embedder.dimension))
        )
        out: builtins.list[Document] = []
        offset = 0
        for item in prepared:
            if isinstance(item, Document):
                out.append(item)
                continue
            rows = vectors[offset : offset + len(item.drafts)]
            offset += len(item.drafts)
            chunks = [
                EmbeddedChunk(d, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                for d, v in zip(item.drafts, rows, strict=True)
            ]
            document = replace(item.document, chunk_count=len(chunks))
            self._store_file(document.content_hash, item.data)
            try:
                self._storage.save_document_version(
                    document, chunks, embedder.model_id, create=item.create
                )
            except DocumentPathTaken as exc:
                raise path_taken(document.path) from exc
            except VersionConflict as exc:
                raise Conflict(
                    f"document {document.id} changed while this version was ingested; retry",
                    code="version_conflict",
                    param="document_id",
                ) from exc
            out.append(document)
        for project_id in {item.document.project_id for item in pending}:
            self.after_commit(project_id)
        return out

    def _store_file(self, sha256: str, data: bytes) -> None:
        target = self._files / sha256
        if not target.exists():
            atomic_write(target, data)


def upload_too_large(limit: int) -> PayloadTooLarge:
    """The one message of an upload over ``max_upload_bytes`` (the API's edge, which stops
    reading there, and the service for every other caller)."""
    return PayloadTooLarge(
        f"the upload is larger than {limit} bytes", code="upload_too_large", param="file"
    )


def path_taken(path: str) -> Conflict:
    return Conflict(f"a document already exists at {path}", code="path_taken", param="path")


def _status(document: Document, job: IngestProgress | None) -> Document:
    if job is None:
        return document
    return replace(
        document,
        status="failed" if job.state == "failed" else "processing",
        chunks_total=job.chunks_total,
        chunks_done=job.chunks_done,
        error=job.error,
        pages_total=job.pages_total or None,
        pages_done=job.pages_done if job.pages_total else None,
    )


def _scanned(prepared: _Prepared | Document) -> TypeGuard[_Prepared]:
    """A version whose pages without a text layer wait for OCR (in the background job)."""
    return isinstance(prepared, _Prepared) and bool(prepared.ocr_pages)


def _unchanged(current: Document, fields: dict[str, Any]) -> bool:
    return all(getattr(current, name) == value for name, value in fields.items())


def _filename(name: str) -> str:
    name = PurePosixPath(name.replace("\\", "/")).name
    if not name or name in (".", "..") or any(ord(c) < 32 for c in name):
        raise InvalidRequest("invalid filename", code="invalid_filename", param="file")
    return name[:255]


def _writable(user: User, upload: Upload) -> None:
    """The path an upload names is inside the caller's grant (before the file is read)."""
    if upload.path:
        grants.writable_path(user, validation.logical_path(upload.path))

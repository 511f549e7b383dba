"""Documents: ingest (extract → chunk → embed → one transaction), versions, list, delete."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from naturali.errors import Conflict, InvalidRequest, NotFound, PayloadTooLarge
from naturali.ids import new_id
from naturali.ingest.chunk import chunk_pages
from naturali.ingest.extract import extract
from naturali.model import Document, User, utcnow
from naturali.ports.embedder import Embedder
from naturali.ports.storage import DocumentPathTaken, EmbeddedChunk, Storage
from naturali.service import validation
from naturali.service.auth import Auth
from naturali.vault.files import atomic_write

MAX_PAGE_SIZE = 100


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
class DocumentPage:
    documents: list[Document]
    next_cursor: str | None


class Documents:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        embedder: Callable[[], Embedder],
        files_dir: Path,
        max_upload_bytes: int,
    ) -> None:
        self._storage = storage
        self._auth = auth
        self._embedder = embedder
        self._files = files_dir
        self._max = max_upload_bytes

    def create(self, user: User, project_id: str, upload: Upload) -> Document:
        self._auth.require(user, project_id, "write")
        if upload.path is None:
            raise InvalidRequest("path is required", code="missing_field", param="path")
        return self._ingest(project_id, None, upload)

    def update(self, user: User, project_id: str, document_id: str, upload: Upload) -> Document:
        self._auth.require(user, project_id, "write")
        current = self._get(project_id, document_id)
        return self._ingest(project_id, current, upload)

    def get(self, user: User, project_id: str, document_id: str) -> Document:
        self._auth.require(user, project_id, "read")
        return self._get(project_id, document_id)

    def list(
        self,
        user: User,
        project_id: str,
        path_prefix: str | None = None,
        cursor: str | None = None,
        limit: int = 20,
    ) -> DocumentPage:
        self._auth.require(user, project_id, "read")
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise InvalidRequest(
                f"limit must be between 1 and {MAX_PAGE_SIZE}", code="invalid_limit", param="limit"
            )
        if path_prefix is not None:
            validation.logical_path(path_prefix, "path_prefix", prefix=True)
        after = _decode_cursor(cursor) if cursor else None
        rows = self._storage.list_documents(project_id, path_prefix, after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        return DocumentPage(rows, _encode_cursor(rows[-1].path) if more else None)

    def delete(self, user: User, project_id: str, document_id: str) -> None:
        self._auth.require(user, project_id, "write")
        self._get(project_id, document_id)
        self._storage.delete_document(project_id, document_id)

    def _get(self, project_id: str, document_id: str) -> Document:
        document = self._storage.get_document(project_id, document_id)
        if document is None:
            raise NotFound(
                f"document {document_id} not found", code="document_not_found", param="document_id"
            )
        return document

    def _ingest(self, project_id: str, current: Document | None, upload: Upload) -> Document:
        if len(upload.data) > self._max:
            raise PayloadTooLarge(
                f"the upload is larger than {self._max} bytes",
                code="upload_too_large",
                param="file",
            )
        path = validation.logical_path(upload.path) if upload.path else None
        path = path or (current.path if current else None)
        assert path is not None
        title = validation.title(upload.title)
        metadata = validation.metadata(upload.metadata)
        tags = validation.tags(upload.tags)
        filename = _filename(upload.filename or PurePosixPath(path).name)
        content_hash = hashlib.sha256(upload.data).hexdigest()
        extracted = extract(upload.data, filename)
        if current is None and self._storage_has_path(project_id, path):
            raise Conflict(f"a document already exists at {path}", code="path_taken", param="path")
        now = utcnow()
        document = Document(
            id=current.id if current else new_id("doc"),
            project_id=project_id,
            path=path,
            title=title
            or (current.title if current else None)
            or extracted.title
            or PurePosixPath(filename).stem,
            metadata=metadata
            if upload.metadata is not None or current is None
            else current.metadata,
            tags=tags if upload.tags is not None or current is None else current.tags,
            version=current.version + 1 if current else 1,
            file_id="file_" + content_hash[:16],
            filename=filename,
            size=len(upload.data),
            content_type=extracted.content_type,
            content_hash=content_hash,
            chunk_count=0,
            page_count=extracted.page_count,
            warnings=extracted.warnings,
            created_at=current.created_at if current else now,
            updated_at=now,
        )
        if current is not None and _unchanged(current, document):
            return current  # idempotent per content hash: same bytes and fields, no new version
        embedder = self._embedder()
        drafts = chunk_pages(extracted.pages, embedder.count_tokens)
        vectors = embedder.embed([d.text for d in drafts]) if drafts else np.zeros((0, 1))
        chunks = [
            EmbeddedChunk(d, np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for d, v in zip(drafts, vectors, strict=True)
        ]
        document = replace(document, chunk_count=len(chunks))
        self._store_file(content_hash, upload.data)
        try:
            self._storage.save_document_version(
                document, chunks, embedder.model_id, create=current is None
            )
        except DocumentPathTaken as exc:
            raise Conflict(
                f"a document already exists at {path}", code="path_taken", param="path"
            ) from exc
        return document

    def _storage_has_path(self, project_id: str, path: str) -> bool:
        rows = self._storage.list_documents(project_id, path, None, 5)
        return any(d.path == path for d in rows)

    def _store_file(self, sha256: str, data: bytes) -> None:
        target = self._files / sha256
        if not target.exists():
            atomic_write(target, data)


def _unchanged(current: Document, new: Document) -> bool:
    return (current.content_hash, current.path, current.title, current.metadata, current.tags) == (
        new.content_hash,
        new.path,
        new.title,
        new.metadata,
        new.tags,
    )


def _filename(name: str) -> str:
    name = PurePosixPath(name.replace("\\", "/")).name
    if not name or name in (".", "..") or any(ord(c) < 32 for c in name):
        raise InvalidRequest("invalid filename", code="invalid_filename", param="file")
    return name[:255]


def _encode_cursor(path: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": path}).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))["after"]
        if not isinstance(value, str):
            raise ValueError
        return value
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidRequest("invalid cursor", code="invalid_cursor", param="cursor") from exc

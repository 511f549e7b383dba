"""Documents: upload a file (multipart) or send text (JSON); versions; list; delete."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.api.errors import from_validation
from naturali.contracts.resources import Deleted, DocumentOut
from naturali.errors import InvalidRequest, UnsupportedMediaType
from naturali.model import Document
from naturali.service import validation
from naturali.service.corpus.documents import Upload, upload_too_large
from naturali.service.requests import DocumentText, DocumentTextUpdate

router = APIRouter(prefix="/v1/projects/{project_id}/documents", tags=["documents"])

_MULTIPART_SCHEMA = {
    "type": "object",
    "required": ["file"],
    "properties": {
        "file": {"type": "string", "format": "binary"},
        "path": {"type": "string", "description": "Logical path, e.g. /handbook/refunds.md"},
        "title": {"type": "string"},
        "metadata": {"type": "string", "description": "A JSON object, as JSON text"},
        "tags": {"type": "string", "description": "A JSON object of strings, as JSON text"},
    },
}


def _body_doc(model: type[Any]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {"schema": _MULTIPART_SCHEMA},
                "application/json": {"schema": model.model_json_schema()},
            },
        }
    }


async def _read_upload(request: Request, *, update: bool) -> Upload:
    content_type = request.headers.get("content-type", "")
    limit: int = request.app.state.naturali.settings.max_upload_bytes
    if content_type.startswith("multipart/form-data"):
        form = await request.form(max_part_size=limit + 1)
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise InvalidRequest("file is required", code="missing_field", param="file")
        data = await file.read(limit + 1)
        if len(data) > limit:
            raise upload_too_large(limit)
        unknown = set(form.keys()) - {"file", "path", "title", "metadata", "tags"}
        if unknown:
            raise InvalidRequest(
                f"unknown field {sorted(unknown)[0]!r}",
                code="unknown_field",
                param=sorted(unknown)[0],
            )
        fields = {k: form.get(k) for k in ("path", "title", "metadata", "tags")}
        texts = {k: v if isinstance(v, str) or v is None else None for k, v in fields.items()}
        return Upload(
            data=data,
            filename=file.filename,
            path=texts["path"],
            title=texts["title"],
            metadata=validation.json_text(texts["metadata"], "metadata"),
            tags=validation.json_text(texts["tags"], "tags"),
        )
    if content_type.startswith("application/json"):
        raw = await request.body()
        model = DocumentTextUpdate if update else DocumentText
        try:
            body = model.model_validate_json(raw)
        except ValidationError as exc:
            raise from_validation([dict(e) for e in exc.errors()]) from exc
        return Upload(
            data=body.content.encode("utf-8"),
            filename=None,
            path=body.path,
            title=body.title,
            metadata=body.metadata,
            tags=body.tags,
        )
    raise UnsupportedMediaType(
        "send multipart/form-data (a file) or application/json (text)",
        code="unsupported_content_type",
    )


PROCESSING: dict[int | str, dict[str, Any]] = {
    202: {
        "model": DocumentOut,
        "description": "Accepted: the version is embedded in the background (status "
        "processing); GET the document to follow it to ready or failed.",
    }
}


@router.post(
    "",
    status_code=201,
    response_model=DocumentOut,
    openapi_extra=_body_doc(DocumentText),
    responses={**PROCESSING, **errors.responses(403, 409, 413, 415)},
)
async def create_document(
    project_id: str, request: Request, response: Response, user: CurrentUser, svc: Service
) -> DocumentOut:
    """Ingest a document: a file (any format naturali reads) or JSON text. 201 ready when it
    was small enough to embed at once, else 202 processing. 409 if the path is taken."""
    upload = await _read_upload(request, update=False)
    document = await _in_threadpool(svc.documents.create, user, project_id, upload)
    return _answer(document, response)


@router.get("/{document_id}", response_model=DocumentOut)
def get_document(project_id: str, document_id: str, user: CurrentUser, svc: Service) -> DocumentOut:
    return DocumentOut.of(svc.documents.get(user, project_id, document_id))


@router.put(
    "/{document_id}",
    response_model=DocumentOut,
    openapi_extra=_body_doc(DocumentTextUpdate),
    responses={**PROCESSING, **errors.responses(403, 409, 413, 415)},
)
async def update_document(
    project_id: str,
    document_id: str,
    request: Request,
    response: Response,
    user: CurrentUser,
    svc: Service,
) -> DocumentOut:
    """A new version (same fields as create; omitted fields keep their values). 202 while
    it is embedded in the background: the version before stays what search sees."""
    upload = await _read_upload(request, update=True)
    document = await _in_threadpool(svc.documents.update, user, project_id, document_id, upload)
    return _answer(document, response)


def _answer(document: Document, response: Response) -> DocumentOut:
    if document.status == "processing":
        response.status_code = 202
    return DocumentOut.of(document)


@router.delete("/{document_id}", response_model=Deleted, responses=errors.responses(403))
def delete_document(project_id: str, document_id: str, user: CurrentUser, svc: Service) -> Deleted:
    svc.documents.delete(user, project_id, document_id)
    return Deleted(id=document_id)


async def _in_threadpool(fn: Any, *args: Any) -> Any:
    """Ingest is CPU-bound (embedding): run it off the event loop."""
    return await run_in_threadpool(fn, *args)

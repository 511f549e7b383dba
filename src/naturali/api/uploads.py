"""A document's body over HTTP: a file with its fields (multipart/form-data) or text (JSON).
Both are read into the one ``Upload`` the service takes, and both are described from the
request model (``DocumentText``): the form's fields are the model's, ``content`` being the
file; ``metadata`` and ``tags`` travel in a form as JSON text."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from naturali.api import errors
from naturali.errors import InvalidRequest, UnsupportedMediaType
from naturali.service import validation
from naturali.service.corpus.documents import Upload, upload_too_large
from naturali.service.requests import DocumentText, DocumentTextUpdate, Strict

_JSON_TEXT = ("metadata", "tags")  # objects, sent in a form as JSON text
_FORM = tuple(name for name in DocumentText.model_fields if name != "content")
_DESCRIBED = {
    "path": "Logical path, e.g. /handbook/refunds.md",
    "metadata": "A JSON object, as JSON text",
    "tags": "A JSON object of strings, as JSON text",
}


def body_schema(model: type[Strict]) -> dict[str, Any]:
    """The route's request body in OpenAPI: a form with a file, or the model as JSON."""
    fields: dict[str, Any] = {"file": {"type": "string", "format": "binary"}}
    for name in _FORM:
        fields[name] = {"type": "string"} | (
            {"description": _DESCRIBED[name]} if name in _DESCRIBED else {}
        )
    form = {"type": "object", "required": ["file"], "properties": fields}
    content = {
        "multipart/form-data": {"schema": form},
        "application/json": {"schema": model.model_json_schema()},
    }
    return {"requestBody": {"required": True, "content": content}}


async def read(request: Request, *, update: bool) -> Upload:
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        return await _form(request)
    if content_type.startswith("application/json"):
        model = DocumentTextUpdate if update else DocumentText
        try:
            body = model.model_validate_json(await request.body())
        except ValidationError as exc:
            raise errors.from_validation([dict(e) for e in exc.errors()]) from exc
        fields = {name: getattr(body, name) for name in _FORM}
        return Upload(data=body.content.encode("utf-8"), filename=None, **fields)
    raise UnsupportedMediaType(
        "send multipart/form-data (a file) or application/json (text)",
        code="unsupported_content_type",
    )


async def _form(request: Request) -> Upload:
    limit: int = request.app.state.naturali.settings.max_upload_bytes
    form = await request.form(max_part_size=limit + 1)
    file = form.get("file")
    if not isinstance(file, UploadFile):
        raise InvalidRequest("file is required", code="missing_field", param="file")
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise upload_too_large(limit)
    unknown = sorted(set(form.keys()) - {"file", *_FORM})
    if unknown:
        raise InvalidRequest(
            f"unknown field {unknown[0]!r}", code="unknown_field", param=unknown[0]
        )
    texts = {k: v if isinstance(v, str) else None for k in _FORM for v in [form.get(k)]}
    fields: dict[str, Any] = {
        k: validation.json_text(v, k) if k in _JSON_TEXT else v for k, v in texts.items()
    }
    return Upload(data=data, filename=file.filename, **fields)

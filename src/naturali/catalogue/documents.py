"""A project's documents: upload a file or send text (a new version of the same fields),
read one, delete one. Their listing and passages are tools (catalogue/knowledge.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from naturali.catalogue.operation import PROJECT, NoFields, Operation, Target
from naturali.contracts.resources import Deleted, DocumentOut
from naturali.model import User
from naturali.service import requests as req
from naturali.service.corpus.documents import Upload

if TYPE_CHECKING:
    from naturali.service.container import Services

DOCUMENT = PROJECT + "/documents/{document_id}"
# A version small enough is embedded at once (201, or 200 for a new version); a larger one in
# the background: the answer says ``processing`` (202) and GET follows it to ready or failed.
PROCESSING = (
    202,
    "Accepted: the version is embedded in the background (status processing); GET the "
    "document to follow it to ready or failed.",
)


def _status(created: int) -> Any:
    def status_of(document: DocumentOut) -> int:
        return 202 if document.status == "processing" else created

    return status_of


def _create(s: Services, user: User, t: Target, upload: Upload) -> DocumentOut:
    return DocumentOut.of(s.documents.create(user, t.project_id, upload))


def _update(s: Services, user: User, t: Target, upload: Upload) -> DocumentOut:
    return DocumentOut.of(s.documents.update(user, t.project_id, t.item, upload))


def _get(s: Services, user: User, t: Target, r: Any) -> DocumentOut:
    return DocumentOut.of(s.documents.get(user, t.project_id, t.item))


def _delete(s: Services, user: User, t: Target, r: Any) -> Deleted:
    s.documents.delete(user, t.project_id, t.item)
    return Deleted(id=t.item)


DOCUMENTS: tuple[Operation, ...] = (
    Operation(
        "create_document",
        "Ingest a document: a file (any format naturali reads) or JSON text. 201 ready when it "
        "was small enough to embed at once, else 202 processing. 409 if the path is taken.",
        req.DocumentText,
        DocumentOut,
        "write",
        "POST",
        PROJECT + "/documents",
        _create,
        sdk="documents.create_text",
        tag="documents",
        status=201,
        status_of=_status(201),
        also=PROCESSING,
        errors=(403, 409, 413, 415),
        upload=True,
    ),
    Operation(
        "get_document",
        "",
        NoFields,
        DocumentOut,
        "read",
        "GET",
        DOCUMENT,
        _get,
        sdk="documents.get",
        tag="documents",
        errors=(),
    ),
    Operation(
        "update_document",
        "A new version (same fields as create; omitted fields keep their values). 202 while "
        "it is embedded in the background: the version before stays what search sees.",
        req.DocumentTextUpdate,
        DocumentOut,
        "write",
        "PUT",
        DOCUMENT,
        _update,
        sdk="documents.replace",
        tag="documents",
        status_of=_status(200),
        also=PROCESSING,
        errors=(403, 409, 413, 415),
        upload=True,
    ),
    Operation(
        "delete_document",
        "",
        NoFields,
        Deleted,
        "write",
        "DELETE",
        DOCUMENT,
        _delete,
        sdk="documents.delete",
        tag="documents",
        errors=(403,),
    ),
)

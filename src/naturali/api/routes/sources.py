"""Sources: Git repositories a project's documents mirror, synced by the servers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.resources import Deleted, SourceList, SourceOut
from naturali.service.syncing.source_requests import SourceCreate, SourceUpdate

router = APIRouter(prefix="/v1/projects/{project_id}/sources", tags=["sources"])


@router.post("", status_code=201, response_model=SourceOut, responses=errors.responses(403))
def create_source(
    project_id: str, body: SourceCreate, user: CurrentUser, svc: Service
) -> SourceOut:
    """Mirror a Git repository under ``path``; with ``every``, the servers sync it on that
    schedule (the first sync at once)."""
    return SourceOut.of(svc.sources.create(user, project_id, body))


@router.get("", response_model=SourceList)
def list_sources(project_id: str, user: CurrentUser, svc: Service) -> SourceList:
    return SourceList(data=[SourceOut.of(s) for s in svc.sources.list(user, project_id)])


@router.get("/{source_id}", response_model=SourceOut)
def get_source(project_id: str, source_id: str, user: CurrentUser, svc: Service) -> SourceOut:
    """The source, with what its last sync did and when the next one is due."""
    return SourceOut.of(svc.sources.get(user, project_id, source_id))


@router.patch("/{source_id}", response_model=SourceOut, responses=errors.responses(403))
def update_source(
    project_id: str, source_id: str, body: SourceUpdate, user: CurrentUser, svc: Service
) -> SourceOut:
    """Change its settings; its documents follow at the next sync."""
    return SourceOut.of(svc.sources.update(user, project_id, source_id, body))


@router.delete("/{source_id}", response_model=Deleted, responses=errors.responses(403))
def delete_source(
    project_id: str,
    source_id: str,
    user: CurrentUser,
    svc: Service,
    keep_documents: Annotated[
        bool, Query(description="Keep the documents it made (default: delete them).")
    ] = False,
) -> Deleted:
    svc.sources.delete(user, project_id, source_id, keep_documents)
    return Deleted(id=source_id)


@router.post(
    "/{source_id}/sync", status_code=202, response_model=SourceOut, responses=errors.responses(403)
)
def sync_source(project_id: str, source_id: str, user: CurrentUser, svc: Service) -> SourceOut:
    """Sync now: a server takes it at once (``sync_requested`` until it begins)."""
    return SourceOut.of(svc.sources.sync(user, project_id, source_id))

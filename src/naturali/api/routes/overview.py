"""A project at a glance: its overview, its document folders with counts, its ingestion jobs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from naturali.api.deps import CurrentUser, Service
from naturali.contracts.overview import FolderList, IngestJobList, ModelOut, OverviewOut

router = APIRouter(prefix="/v1/projects/{project_id}", tags=["projects"])

Cursor = Annotated[str | None, Query(description="next_cursor of the previous page")]


@router.get("/overview", response_model=OverviewOut)
def project_overview(project_id: str, user: CurrentUser, svc: Service) -> OverviewOut:
    """What the project stores, its jobs by state, its memory stores with their memories,
    the embedding model, and its search index on the server that answered."""
    o = svc.overview.project(user, project_id)
    model = ModelOut(id=o.model_id, dimension=o.dimension)
    return OverviewOut.of(o.usage, model, o.index, o.ingestion, o.stores)


@router.get("/documents/folders", response_model=FolderList)
def document_folders(
    project_id: str,
    user: CurrentUser,
    svc: Service,
    prefix: Annotated[str, Query(description="A folder, ending with '/'")] = "/",
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
) -> FolderList:
    """The folders directly under ``prefix``, by path, each with its documents and chunks at
    any depth, and how many documents lie directly in ``prefix``: a tree, a level a call."""
    page = svc.overview.folders(user, project_id, prefix, cursor, limit)
    return FolderList.of(page.prefix, page.here, page.folders, page.next_cursor)


@router.get("/ingest_jobs", response_model=IngestJobList)
def ingest_jobs(
    project_id: str,
    user: CurrentUser,
    svc: Service,
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> IngestJobList:
    """The project's ingestion jobs queued, running or failed, oldest first, with progress."""
    page = svc.overview.jobs(user, project_id, cursor, limit)
    return IngestJobList.of(page.jobs, page.next_cursor)

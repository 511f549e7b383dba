"""Projects and members."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.resources import (
    AuditEntryOut,
    AuditPage,
    MemberList,
    MemberOut,
    ProjectList,
    ProjectOut,
    UsageOut,
)
from naturali.service.requests import MemberRole, ProjectCreate

router = APIRouter(prefix="/v1/projects", tags=["projects"])


@router.post("", status_code=201, response_model=ProjectOut)
def create_project(body: ProjectCreate, user: CurrentUser, svc: Service) -> ProjectOut:
    """Create a project; the caller becomes its owner."""
    return ProjectOut.of(*svc.projects.create(user, body.name))


@router.get("", response_model=ProjectList)
def list_projects(user: CurrentUser, svc: Service) -> ProjectList:
    """Projects the caller is a member of."""
    return ProjectList(data=[ProjectOut.of(p, m) for p, m in svc.projects.list(user)])


@router.get("/{project_id}", response_model=ProjectOut)
def get_project(project_id: str, user: CurrentUser, svc: Service) -> ProjectOut:
    return ProjectOut.of(*svc.projects.get(user, project_id))


@router.get("/{project_id}/usage", response_model=UsageOut)
def project_usage(project_id: str, user: CurrentUser, svc: Service) -> UsageOut:
    """What the project stores — documents, their bytes, chunks, memories — and its quotas
    (0: none); shared by every server."""
    used, limits = svc.projects.usage(user, project_id, svc.quotas)
    return UsageOut(**used.__dict__, quotas=limits.__dict__)


@router.get("/{project_id}/audit", response_model=AuditPage, responses=errors.responses(403))
def project_audit(
    project_id: str,
    user: CurrentUser,
    svc: Service,
    since: Annotated[str | None, Query(description="From this instant (ISO 8601)")] = None,
    until: Annotated[str | None, Query(description="Before this instant (ISO 8601)")] = None,
    operation: Annotated[
        str | None, Query(description="One operation: POST /v1/projects/{project_id}/documents")
    ] = None,
    cursor: Annotated[str | None, Query(description="next_cursor of the previous page")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> AuditPage:
    """The project's writes, oldest first: who (user, token), what (operation, ids), when,
    the request id and the status. Owners only."""
    entries, next_cursor = svc.audit.list(user, project_id, since, until, operation, cursor, limit)
    return AuditPage(data=[AuditEntryOut.of(e) for e in entries], next_cursor=next_cursor)


@router.get("/{project_id}/members", response_model=MemberList)
def list_members(project_id: str, user: CurrentUser, svc: Service) -> MemberList:
    return MemberList(data=[MemberOut.of(m) for m in svc.projects.members(user, project_id)])


@router.put(
    "/{project_id}/members/{user_id}",
    response_model=MemberOut,
    responses=errors.responses(403, 409),
)
def put_member(
    project_id: str, user_id: str, body: MemberRole, user: CurrentUser, svc: Service
) -> MemberOut:
    """Add a member or change their role (owners only)."""
    return MemberOut.of(svc.projects.put_member(user, project_id, user_id, body.role))


@router.delete(
    "/{project_id}/members/{user_id}", status_code=204, responses=errors.responses(403, 409)
)
def remove_member(project_id: str, user_id: str, user: CurrentUser, svc: Service) -> None:
    svc.projects.remove_member(user, project_id, user_id)

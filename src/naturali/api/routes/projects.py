"""Projects and members."""

from __future__ import annotations

from fastapi import APIRouter

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.resources import MemberList, MemberOut, ProjectList, ProjectOut
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

"""Projects, their members, usage, overview, folders, ingestion jobs and audit trail, and the
caller's own tokens: the routes a team's administration and the Control UI call."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from naturali.catalogue.operation import PROJECT, NoFields, Operation, Target
from naturali.contracts.overview import FolderList, IngestJobList, ModelOut, OverviewOut
from naturali.contracts.resources import (
    AuditEntryOut,
    AuditPage,
    MemberList,
    MemberOut,
    ProjectList,
    ProjectOut,
    TokenCreated,
    TokenList,
    TokenOut,
    UsageOut,
)
from naturali.model import WHOLE, Member, User
from naturali.service import requests as req

if TYPE_CHECKING:
    from naturali.service.container import Services


def _create_project(s: Services, user: User, t: Target, r: req.ProjectCreate) -> ProjectOut:
    if r.embedding_model is not None:
        s.model_changes.check(r.embedding_model)
    project, member = s.projects.create(user, r.name, r.embedding_model)
    return ProjectOut.of(project, _as_caller(user, member), s.embedders.name_of(project))


def _list_projects(s: Services, user: User, t: Target, r: Any) -> ProjectList:
    found = s.projects.list(user)
    projects = [ProjectOut.of(p, _as_caller(user, m), s.embedders.name_of(p)) for p, m in found]
    return ProjectList(data=projects)


def _get_project(s: Services, user: User, t: Target, r: Any) -> ProjectOut:
    project, member = s.projects.get(user, t.project_id)
    # How many passages are left to embed again counts the whole project's.
    left = s.model_changes.left(project) if user.grant.whole else None
    return ProjectOut.of(project, _as_caller(user, member), s.embedders.name_of(project), left)


def _update_project(s: Services, user: User, t: Target, r: req.ProjectUpdate) -> ProjectOut:
    project, member = s.projects.get(user, t.project_id)
    moved = s.model_changes.move(project, r.embedding_model)
    return ProjectOut.of(moved, member, s.embedders.name_of(moved), s.model_changes.left(moved))


def _as_caller(user: User, member: Member) -> Member:
    """The membership with the grant the caller acts under (its token's met with it)."""
    return replace(member, grant=user.grant.narrowed(member.grant))


def _usage(s: Services, user: User, t: Target, r: Any) -> UsageOut:
    used, limits = s.projects.usage(user, t.project_id, s.quotas)
    return UsageOut(**used.__dict__, quotas=limits.__dict__)


def _overview(s: Services, user: User, t: Target, r: Any) -> OverviewOut:
    o = s.overview.project(user, t.project_id)
    model = ModelOut(id=o.model_id, dimension=o.dimension)
    return OverviewOut.of(o.usage, model, o.index, o.ingestion, o.stores)


def _folders(s: Services, user: User, t: Target, r: req.FoldersQuery) -> FolderList:
    page = s.overview.folders(user, t.project_id, r.prefix, r.cursor, r.limit)
    return FolderList.of(page.prefix, page.here, page.folders, page.next_cursor)


def _jobs(s: Services, user: User, t: Target, r: req.JobsQuery) -> IngestJobList:
    page = s.overview.jobs(user, t.project_id, r.cursor, r.limit)
    return IngestJobList.of(page.jobs, page.next_cursor)


def _audit(s: Services, user: User, t: Target, r: req.AuditQuery) -> AuditPage:
    entries, cursor = s.audit.list(
        user, t.project_id, r.since, r.until, r.operation, r.cursor, r.limit
    )
    return AuditPage(data=[AuditEntryOut.of(e) for e in entries], next_cursor=cursor)


def _members(s: Services, user: User, t: Target, r: Any) -> MemberList:
    return MemberList(data=[MemberOut.of(m) for m in s.projects.members(user, t.project_id)])


def _put_member(s: Services, user: User, t: Target, r: req.MemberRole) -> MemberOut:
    member = s.projects.put_member(user, t.project_id, t.item, r.role, r.grant(WHOLE))
    return MemberOut.of(member)


def _remove_member(s: Services, user: User, t: Target, r: Any) -> None:
    s.projects.remove_member(user, t.project_id, t.item)


def _create_token(s: Services, user: User, t: Target, r: req.TokenCreate) -> TokenCreated:
    projects = list(r.projects) if r.projects is not None else None
    grant = r.grant(user.grant)
    token, secret = s.tokens.create(user, r.name, r.scope, projects, r.expires_in, grant)
    return TokenCreated(**TokenOut.of(token).model_dump(), token=secret)


def _list_tokens(s: Services, user: User, t: Target, r: Any) -> TokenList:
    return TokenList(data=[TokenOut.of(token) for token in s.tokens.list(user)])


def _revoke_token(s: Services, user: User, t: Target, r: Any) -> None:
    s.tokens.revoke(user, t.item)


MEMBER = PROJECT + "/members/{user_id}"
PROJECTS: tuple[Operation, ...] = (
    Operation(
        "create_project",
        "Create a project; the caller becomes its owner.",
        req.ProjectCreate,
        ProjectOut,
        "any",
        "POST",
        "/v1/projects",
        _create_project,
        sdk="projects.create",
        tag="projects",
        status=201,
        errors=(),
    ),
    Operation(
        "list_projects",
        "Projects the caller is a member of.",
        NoFields,
        ProjectList,
        "any",
        "GET",
        "/v1/projects",
        _list_projects,
        sdk="projects.list",
        tag="projects",
        errors=(),
    ),
    Operation(
        "get_project",
        "",
        NoFields,
        ProjectOut,
        "read",
        "GET",
        PROJECT,
        _get_project,
        sdk="projects.get",
        tag="projects",
        errors=(),
    ),
    Operation(
        "update_project",
        "Change the project's embedding model (owners only): its passages are embedded again "
        "in the background (chunks_to_reembed counts down), and its searches use the model "
        "it had until every one is done.",
        req.ProjectUpdate,
        ProjectOut,
        "owner",
        "PATCH",
        PROJECT,
        _update_project,
        sdk="projects.update",
        tag="projects",
        errors=(403,),
        whole=True,
    ),
    Operation(
        "project_usage",
        "What the project stores — documents, their bytes, chunks, memories — and its quotas "
        "(0: none); shared by every server.",
        NoFields,
        UsageOut,
        "read",
        "GET",
        PROJECT + "/usage",
        _usage,
        sdk="projects.usage",
        tag="projects",
        errors=(),
    ),
    Operation(
        "project_overview",
        "What the project stores, its jobs by state, its memory stores with their memories, "
        "the embedding model, and its search index on the server that answered.",
        NoFields,
        OverviewOut,
        "read",
        "GET",
        PROJECT + "/overview",
        _overview,
        sdk="projects.overview",
        tag="projects",
        errors=(),
    ),
    Operation(
        "document_folders",
        "The folders directly under ``prefix``, by path, each with its documents and chunks at "
        "any depth, and how many documents lie directly in ``prefix``: a tree, a level a call.",
        req.FoldersQuery,
        FolderList,
        "read",
        "GET",
        PROJECT + "/documents/folders",
        _folders,
        sdk="documents.folders",
        tag="projects",
        errors=(),
    ),
    Operation(
        "ingest_jobs",
        "The project's ingestion jobs queued, running or failed, oldest first, with progress.",
        req.JobsQuery,
        IngestJobList,
        "read",
        "GET",
        PROJECT + "/ingest_jobs",
        _jobs,
        sdk="projects.ingest_jobs",
        tag="projects",
        errors=(),
    ),
    Operation(
        "project_audit",
        "The project's writes, oldest first: who (user, token), what (operation, ids), when, "
        "the request id, the status and the grant it ran under. Owners of the whole project "
        "only.",
        req.AuditQuery,
        AuditPage,
        "owner",
        "GET",
        PROJECT + "/audit",
        _audit,
        sdk="projects.audit",
        tag="projects",
        errors=(403,),
        whole=True,
    ),
    Operation(
        "list_members",
        "",
        NoFields,
        MemberList,
        "read",
        "GET",
        PROJECT + "/members",
        _members,
        sdk="projects.list_members",
        tag="projects",
        errors=(),
    ),
    Operation(
        "put_member",
        "Add a member or change their role (owners only).",
        req.MemberRole,
        MemberOut,
        "owner",
        "PUT",
        MEMBER,
        _put_member,
        sdk="projects.put_member",
        tag="projects",
    ),
    Operation(
        "remove_member",
        "",
        NoFields,
        None,
        "owner",
        "DELETE",
        MEMBER,
        _remove_member,
        sdk="projects.remove_member",
        tag="projects",
        status=204,
    ),
    Operation(
        "create_token",
        "A token of the caller's with a scope, optionally limited to projects and expiring; "
        "the secret is in this answer only. Needs an admin token.",
        req.TokenCreate,
        TokenCreated,
        "admin",
        "POST",
        "/v1/tokens",
        _create_token,
        sdk="tokens.create",
        tag="tokens",
        status=201,
        errors=(403, 404),
    ),
    Operation(
        "list_tokens",
        "The caller's tokens, revoked ones included; never a secret. Needs an admin token.",
        NoFields,
        TokenList,
        "admin",
        "GET",
        "/v1/tokens",
        _list_tokens,
        sdk="tokens.list",
        tag="tokens",
        errors=(403,),
    ),
    Operation(
        "revoke_token",
        "Revoke a token: refused from now on (on another server within a second).",
        NoFields,
        None,
        "admin",
        "DELETE",
        "/v1/tokens/{token_id}",
        _revoke_token,
        sdk="tokens.revoke",
        tag="tokens",
        status=204,
        errors=(403,),
    ),
)

"""Projects, members and users (roles: owner, editor, viewer)."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from naturali.errors import Conflict, InvalidRequest, NotFound
from naturali.ids import new_id, new_token
from naturali.model import ROLES, WHOLE, Grant, Member, Project, ProjectUsage, User, utcnow
from naturali.ports.storage import LastOwner, Storage
from naturali.service import validation
from naturali.service.platform import grants
from naturali.service.platform.auth import Auth, hash_token
from naturali.service.platform.quotas import QuotaLimits, Quotas
from naturali.service.platform.tokens import admin_token


class Projects:
    def __init__(self, storage: Storage, auth: Auth) -> None:
        self._storage = storage
        self._auth = auth

    def create(
        self, user: User, name: str, embedding_model: str | None = None
    ) -> tuple[Project, Member]:
        """A project with the caller as its owner (a write token not limited to projects),
        embedded with ``embedding_model`` (None: the server's model)."""
        self._auth.require_scope(user, "write", every_project=True)
        self._auth.writing()
        if not name.strip() or len(name) > 200:
            raise InvalidRequest("name must be 1–200 characters", code="invalid_name", param="name")
        validation.one_line(name, "name", "invalid_name")
        now = utcnow()
        project = Project(new_id("proj"), name.strip(), now, embedding_model)
        owner = Member(project.id, user.id, "owner", now)
        self._storage.create_project(project, owner)
        return project, owner

    def list(self, user: User) -> list[tuple[Project, Member]]:
        """The projects the caller is a member of (that the caller's token may reach)."""
        found = self._storage.list_projects(user.id)
        return [(p, m) for p, m in found if user.projects is None or p.id in user.projects]

    def get(self, user: User, project_id: str) -> tuple[Project, Member]:
        """One project the caller is a member of."""
        member = self._storage.get_member(project_id, user.id)
        assert member is not None  # admitted (catalogue/operation.py)
        project = self._storage.get_project(project_id)
        assert project is not None
        return project, member

    def usage(
        self, user: User, project_id: str, quotas: Quotas
    ) -> tuple[ProjectUsage, QuotaLimits]:
        """What the project stores (what of it the caller was granted), and its quotas (0:
        none)."""
        if not user.grant.whole:
            return self._storage.project_usage(project_id, user.grant), quotas.limits
        return quotas.usage(project_id), quotas.limits

    def members(self, user: User, project_id: str) -> builtins.list[Member]:
        """The project's members; to a limited caller, each member's grant as far as it
        reaches into the caller's (the rest is not there for them)."""
        members = self._storage.list_members(project_id)
        if user.grant.whole:
            return members
        return [replace(m, grant=m.grant.narrowed(user.grant)) for m in members]

    def put_member(
        self, user: User, project_id: str, user_id: str, role: str, grant: Grant = WHOLE
    ) -> Member:
        """Add a member or change a role and grant (owners only; the last owner stays). A
        limited owner gives no more than it holds, and changes only members within it."""
        if role not in ROLES:
            raise InvalidRequest(
                f"role must be one of {', '.join(ROLES)}", code="invalid_role", param="role"
            )
        if self._storage.get_user(user_id) is None:
            raise NotFound(f"user {user_id} not found", code="user_not_found", param="user_id")
        existing = self._storage.get_member(project_id, user_id)
        grants.covered(user, grant)
        if existing is not None:
            grants.covered(user, existing.grant, "user_id")
        created = existing.created_at if existing else utcnow()
        member = Member(project_id, user_id, role, created, grant)
        with _keeping_an_owner():
            self._storage.put_member(member)
        return member

    def remove_member(self, user: User, project_id: str, user_id: str) -> None:
        """Remove a member (owners only; the last owner stays)."""
        existing = self._storage.get_member(project_id, user_id)
        if existing is None:
            raise NotFound(
                f"user {user_id} is not a member", code="member_not_found", param="user_id"
            )
        grants.covered(user, existing.grant, "user_id")
        with _keeping_an_owner():
            self._storage.remove_member(project_id, user_id)


@contextmanager
def _keeping_an_owner() -> Iterator[None]:
    """The storage checks the rule in the same transaction as the change (so it holds under
    concurrent changes); here its refusal becomes a 409."""
    try:
        yield
    except LastOwner as exc:
        raise Conflict(
            "a project must keep at least one owner", code="last_owner", param="user_id"
        ) from exc


class Users:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def create(self, name: str, token: str | None = None) -> tuple[User, str]:
        """A user and their first token (returned once; only its hash is stored)."""
        if not name.strip() or len(name) > 200:
            raise InvalidRequest("name must be 1–200 characters", code="invalid_name", param="name")
        validation.one_line(name, "name", "invalid_name")
        secret = token or new_token()
        user = User(new_id("user"), name.strip(), utcnow())
        self._storage.create_user(user, admin_token(user.id), hash_token(secret))
        return user, secret

    def get(self, user_id: str) -> User:
        """The user with this id; NotFound otherwise."""
        user = self._storage.get_user(user_id)
        if user is None:
            raise NotFound(f"user {user_id} not found", code="user_not_found", param="user_id")
        return user

    def new_token(self, user_id: str) -> str:
        """Another token for a user; returned this once."""
        if self._storage.get_user(user_id) is None:
            raise NotFound(f"user {user_id} not found", code="user_not_found", param="user_id")
        secret = new_token()
        self._storage.create_token(admin_token(user_id, "admin"), hash_token(secret))
        return secret

    def count(self) -> int:
        """How many users exist."""
        return self._storage.count_users()

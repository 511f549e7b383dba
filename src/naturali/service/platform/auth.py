"""Who is calling and what they may do. Tokens are stored as SHA-256 hashes only."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Literal

from naturali.errors import Forbidden, NotFound, Unauthenticated
from naturali.model import SCOPES, Grant, Member, Scope, Token, User, utcnow
from naturali.ports.storage import Storage

Need = Literal["read", "write", "owner"]
_ALLOWED: dict[Need, tuple[str, ...]] = {
    "read": ("owner", "editor", "viewer"),
    "write": ("owner", "editor"),
    "owner": ("owner",),
}
# The token scope each need takes: a read token reads, a write token writes, an admin token
# also manages a project (members, the project itself) and tokens.
_SCOPE_FOR: dict[Need, Scope] = {"read": "read", "write": "write", "owner": "admin"}


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


log = logging.getLogger("naturali.auth")

# Tokens remembered per process (the most recently used), each for at most ``KNOWN_SECONDS``:
# a revocation on another server (PostgreSQL) is refused here within that time, one on this
# server at once (``forget``). A token that is not found is never remembered.
KNOWN_TOKENS = 4096
KNOWN_SECONDS = 1.0
# How often a token's ``last_used_at`` is written, at most.
TOUCH_SECONDS = 60.0


class Auth:
    def __init__(self, storage: Storage, before_write: Callable[[], None] = lambda: None) -> None:
        self._storage = storage
        # Every write passes this first, once its caller may make it (the disk's floor).
        self._before_write = before_write
        # Every HTTP request is authenticated on the event loop: a store read each time was
        # ~7% of the loop's time under load, and a round trip on PostgreSQL.
        self._known: OrderedDict[str, tuple[User, Token, float]] = OrderedDict()
        self._known_lock = threading.Lock()
        self._touched: dict[str, float] = {}

    def authenticate(self, token: str | None) -> User:
        """The user a bearer token belongs to, acting as the token allows; Unauthenticated
        for a missing, unknown, revoked or expired token."""
        if not token:
            raise Unauthenticated("missing bearer token", code="missing_token")
        user, held = self._lookup(hash_token(token))
        if held.revoked_at is not None:
            raise Unauthenticated(f"token {held.name!r} was revoked", code="token_revoked")
        if held.expires_at is not None and held.expires_at <= utcnow():
            raise Unauthenticated(f"token {held.name!r} has expired", code="token_expired")
        self._touch(held)
        return user

    def forget(self) -> None:
        """Drop every remembered token (after a revocation here)."""
        with self._known_lock:
            self._known.clear()

    def _lookup(self, token_hash: str) -> tuple[User, Token]:
        now = time.monotonic()
        with self._known_lock:
            known = self._known.get(token_hash)
            if known is not None and now - known[2] < KNOWN_SECONDS:
                self._known.move_to_end(token_hash)
                return known[0], known[1]
        found = self._storage.token_for(token_hash)
        if found is None:
            raise Unauthenticated("invalid bearer token", code="invalid_token")
        with self._known_lock:
            self._known[token_hash] = (*found, now)
            self._known.move_to_end(token_hash)
            while len(self._known) > KNOWN_TOKENS:
                self._known.popitem(last=False)
        return found

    def _touch(self, held: Token) -> None:
        now = time.monotonic()
        if now - self._touched.get(held.id, -TOUCH_SECONDS) >= TOUCH_SECONDS:
            self._touched[held.id] = now
            try:
                self._storage.touch_token(held.id, utcnow())
            except Exception:  # a full disk, a busy catalog: the request stands without it
                log.warning("could not record when token %s was last used", held.id)

    def require_scope(self, user: User, need: Scope, *, every_project: bool = False) -> None:
        """For what is not one project's: the token's scope must reach ``need``, and with
        ``every_project`` the token must not be limited to some projects (creating one)."""
        if SCOPES.index(user.scope) < SCOPES.index(need):
            raise Forbidden(
                f"a {user.scope} token may not do this (needs a {need} token)",
                code="insufficient_scope",
            )
        if every_project and user.projects is not None:
            raise Forbidden(
                "a token limited to some projects may not do this", code="insufficient_scope"
            )

    def acting_user(self, project_id: str, token: str | None) -> User:
        """Who acts for a command on the data dir itself (no server): the token's user, or
        else the project's first owner (whoever can read the data dir owns it anyway)."""
        if token:
            return self.authenticate(token)
        owners = [m for m in self._storage.list_members(project_id) if m.role == "owner"]
        user = self._storage.get_user(owners[0].user_id) if owners else None
        if user is None:
            raise NotFound(
                f"project {project_id} not found", code="project_not_found", param="project_id"
            )
        return user

    def admit(self, user: User, project_id: str, role: Need | Literal["any", "admin"]) -> User:
        """The check of every operation of the catalogue (catalogue/operation.py), by the
        role its entry needs: a member's role in the project, an admin token, or any user.
        The user back acts under what of the project both its token and its membership
        grant (service/platform/grants.py)."""
        if role == "admin":
            self.require_scope(user, "admin")
        elif role != "any":
            member = self.require(user, project_id, role)
            return replace(user, grant=user.grant.narrowed(member.grant))
        return user

    def grant_of(self, user: User, project_id: str | None) -> Grant:
        """What of the project a call of ``user`` could reach (the audit trail's record)."""
        member = self._storage.get_member(project_id, user.id) if project_id else None
        return user.grant if member is None else user.grant.narrowed(member.grant)

    def require(self, user: User, project_id: str, need: Need) -> Member:
        """A non-member, or a token limited to other projects, gets 404 (ids do not leak); a
        member without the role, or a token without the scope, gets 403."""
        member = self._storage.get_member(project_id, user.id)
        if member is None or (user.projects is not None and project_id not in user.projects):
            raise NotFound(
                f"project {project_id} not found", code="project_not_found", param="project_id"
            )
        if member.role not in _ALLOWED[need]:
            raise Forbidden(
                f"role {member.role!r} may not do this (needs {' or '.join(_ALLOWED[need])})",
                code="insufficient_role",
            )
        self.require_scope(user, _SCOPE_FOR[need])
        if need != "read":
            self.writing()
        return member

    def writing(self) -> None:
        """A write is about to be made: refused here if it cannot be (a full disk)."""
        self._before_write()

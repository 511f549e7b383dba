"""Who is calling and what they may do. Tokens are stored as SHA-256 hashes only."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Literal

from naturali.errors import Forbidden, NotFound, Unauthenticated
from naturali.model import Member, User
from naturali.ports.storage import Storage

Need = Literal["read", "write", "owner"]
_ALLOWED: dict[Need, tuple[str, ...]] = {
    "read": ("owner", "editor", "viewer"),
    "write": ("owner", "editor"),
    "owner": ("owner",),
}


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# Tokens remembered per process (the most recently used): a token's user never changes once
# the token exists, since no operation deletes or rewrites tokens or users, so a remembered
# answer stays right. A token that is not found is never remembered. An operation that
# revokes tokens must clear this.
KNOWN_TOKENS = 4096


class Auth:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        # Every HTTP request is authenticated on the event loop: a store read each time was
        # ~7% of the loop's time under load, and a round trip on PostgreSQL.
        self._known: OrderedDict[str, User] = OrderedDict()
        self._known_lock = threading.Lock()

    def authenticate(self, token: str | None) -> User:
        """The user a bearer token belongs to; Unauthenticated otherwise."""
        if not token:
            raise Unauthenticated("missing bearer token", code="missing_token")
        token_hash = hash_token(token)
        with self._known_lock:
            user = self._known.get(token_hash)
            if user is not None:
                self._known.move_to_end(token_hash)
                return user
        user = self._storage.user_for_token(token_hash)
        if user is None:
            raise Unauthenticated("invalid bearer token", code="invalid_token")
        with self._known_lock:
            self._known[token_hash] = user
            while len(self._known) > KNOWN_TOKENS:
                self._known.popitem(last=False)
        return user

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

    def require(self, user: User, project_id: str, need: Need) -> Member:
        """A non-member gets 404 (ids do not leak); a member without the role gets 403."""
        member = self._storage.get_member(project_id, user.id)
        if member is None:
            raise NotFound(
                f"project {project_id} not found", code="project_not_found", param="project_id"
            )
        if member.role not in _ALLOWED[need]:
            raise Forbidden(
                f"role {member.role!r} may not do this (needs {' or '.join(_ALLOWED[need])})",
                code="insufficient_role",
            )
        return member

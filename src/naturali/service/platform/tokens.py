"""Named tokens: a user holds several, each with a scope (read, write, admin), optionally
limited to some projects and with an expiry; revoked at once. Only the SHA-256 of a secret is
stored; the secret is returned by ``create`` and never again.

Tokens have a lineage: a token makes only tokens within its own scope, projects and lifetime
(expiring no later than itself), and revoking one revokes every token made through it, so a
leaked short-lived token never becomes a permanent one. A token revokes only itself and the
tokens made through it (never its parent, a sibling or the user's other tokens); one limited to
some projects also sees only those."""

from __future__ import annotations

import builtins
import re
from datetime import UTC, datetime, timedelta

from naturali.errors import InvalidRequest, NotFound
from naturali.ids import new_id, new_token
from naturali.model import SCOPES, WHOLE, Grant, Scope, Token, User, utcnow
from naturali.ports.storage import Storage
from naturali.service import validation
from naturali.service.platform import grants
from naturali.service.platform.auth import Auth, hash_token

_DURATION = re.compile(r"^(\d{1,6})([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def admin_token(user_id: str, name: str = "default") -> Token:
    """The token of a user made on the data dir (the owner's, `naturali admin user …`)."""
    return Token(new_id("tok"), user_id, name, "admin", None, utcnow())


class Tokens:
    def __init__(self, storage: Storage, auth: Auth) -> None:
        self._storage = storage
        self._auth = auth

    def create(
        self,
        user: User,
        name: str,
        scope: Scope = "read",
        projects: builtins.list[str] | None = None,
        expires_in: str | None = None,
        grant: Grant = WHOLE,
    ) -> tuple[Token, str]:
        """A new token of the caller's; its secret is returned this once. A token may not
        reach further than the one that made it: its projects, lifetime and ``grant`` (what
        of a project it reaches) are within the caller's."""
        self._auth.require_scope(user, "admin")
        grants.covered(user, grant)
        name = validation.title(name) or ""
        if not name:
            raise InvalidRequest("name is required", code="missing_field", param="name")
        if scope not in SCOPES:
            raise InvalidRequest(
                f"scope must be one of {', '.join(SCOPES)}, got {scope!r}",
                code="invalid_value",
                param="scope",
            )
        limited = self._projects(user, projects)
        self._auth.writing()
        expires = _earliest(_expiry(expires_in), user.token_expires_at)
        token = Token(
            new_id("tok"),
            user.id,
            name,
            scope,
            limited,
            utcnow(),
            expires,
            parent_id=user.token_id,
            grant=grant,
        )
        secret = new_token()
        self._storage.create_token(token, hash_token(secret))
        return token, secret

    def list(self, user: User) -> builtins.list[Token]:
        """The caller's tokens, revoked ones included (never their secrets)."""
        self._auth.require_scope(user, "admin")
        return self._storage.list_tokens(user.id, self._within(user))

    def revoke(self, user: User, token_id: str) -> None:
        """Revoke one of the caller's tokens: refused from now on, here at once, on another
        server within a second."""
        self._auth.require_scope(user, "admin")
        self._auth.writing()
        lineage = user.token_id  # None: the operator's bootstrap token, which is every token
        if not self._storage.revoke_token(user.id, token_id, utcnow(), lineage):
            raise NotFound(f"token {token_id} not found", code="token_not_found", param="token_id")
        self._auth.forget()

    @staticmethod
    def _within(user: User) -> str | None:
        """The lineage a limited token (to projects, or to some of a project) is confined to:
        its own."""
        return user.token_id if user.projects is not None or not user.grant.whole else None

    def _projects(self, user: User, projects: builtins.list[str] | None) -> tuple[str, ...] | None:
        if projects is None:
            return user.projects  # a limited token makes only tokens as limited
        for project_id in projects:
            self._auth.require(user, project_id, "read")  # 404 for one the caller cannot see
        return tuple(dict.fromkeys(projects))


def _earliest(*expiries: str | None) -> str | None:
    return min((e for e in expiries if e is not None), default=None)


def _expiry(expires_in: str | None) -> str | None:
    if expires_in is None:
        return None
    match = _DURATION.match(expires_in)
    if not match:
        raise InvalidRequest(
            f"expires_in must be a number and a unit (s, m, h, d), e.g. 30d, got {expires_in!r}",
            code="invalid_value",
            param="expires_in",
        )
    if int(match.group(1)) == 0:
        raise InvalidRequest(
            "expires_in must be positive: a token that has expired already is of no use",
            code="invalid_value",
            param="expires_in",
        )
    delta = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

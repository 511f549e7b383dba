"""Who may do what, as rows of the catalog: users' tokens, project members, their grants
(model.py Grant, two JSON columns) and the audit trail, for both SQL adapters."""

from __future__ import annotations

import json
from typing import Any, cast

from naturali.model import AuditEntry, Grant, Member, Role, Scope, Token, User
from naturali.storage.rows import Row


def member(row: Row) -> Member:
    return Member(
        row["project_id"], row["user_id"], cast(Role, row["role"]), row["created_at"], grant(row)
    )


def _listed(column: str | None) -> tuple[str, ...] | None:
    """A column that holds a JSON list, or NULL for "all" (a token's projects, a grant's)."""
    return None if column is None else tuple(json.loads(column))


def _listing(values: tuple[str, ...] | None) -> str | None:
    return None if values is None else json.dumps(list(values))


def grant(row: Row) -> Grant:
    """A row's ``path_prefixes`` and ``memory_store_ids`` (JSON lists; NULL: all)."""
    return Grant(_listed(row["path_prefixes"]), _listed(row["memory_store_ids"]))


def grant_columns(held: Grant) -> tuple[str | None, str | None]:
    """A grant as its two columns, in that order."""
    return _listing(held.paths), _listing(held.stores)


def token(row: Row) -> Token:
    return Token(
        id=row["id"],
        user_id=row["user_id"],
        name=row["name"],
        scope=cast(Scope, row["scope"]),
        projects=_listed(row["projects"] or None),  # an empty value, too, is every project
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        last_used_at=row["last_used_at"],
        revoked_at=row["revoked_at"],
        parent_id=row["parent_id"],
        grant=grant(row),
    )


def user_and_token(row: Row) -> tuple[User, Token]:
    """A token row joined with its user's (``user_name``, ``user_created_at``): the user as
    this token lets them act."""
    held = token(row)
    user = User(
        held.user_id,
        row["user_name"],
        row["user_created_at"],
        scope=held.scope,
        projects=held.projects,
        token_name=held.name,
        token_id=held.id,
        token_expires_at=held.expires_at,
        grant=held.grant,
    )
    return user, held


def audit_entry(row: Row) -> AuditEntry:
    return AuditEntry(
        at=row["at"],
        project_id=row["project_id"],
        user_id=row["user_id"],
        token_name=row["token_name"],
        request_id=row["request_id"],
        operation=row["operation"],
        ids=json.loads(row["ids"]),
        status=int(row["status"]),
        seq=int(row["seq"]),
        grant=grant(row),
    )


TOKEN_COLUMNS = (
    "token_hash, user_id, created_at, id, name, scope, projects, expires_at, parent_id, "
    "path_prefixes, memory_store_ids"
)


def token_marks(placeholder: str) -> str:
    """One parameter placeholder for each of ``TOKEN_COLUMNS``."""
    return ", ".join([placeholder] * len(TOKEN_COLUMNS.split(",")))


def lineage(placeholder: str) -> str:
    """SQL for a token of a user (parameters: token id, user id) and every token made through
    it, as ``lineage(id)``; the query that uses it follows."""
    return (
        "WITH RECURSIVE lineage(id) AS ("
        f"SELECT id FROM tokens WHERE id = {placeholder} AND user_id = {placeholder} "
        "UNION SELECT t.id FROM tokens t JOIN lineage l ON t.parent_id = l.id) "
    )


def token_row(token: Token, token_hash: str) -> tuple[Any, ...]:
    """A token's columns, in ``TOKEN_COLUMNS``' order, as stored (projects as JSON)."""
    return (
        token_hash,
        token.user_id,
        token.created_at,
        token.id,
        token.name,
        token.scope,
        _listing(token.projects),
        token.expires_at,
        token.parent_id,
        *grant_columns(token.grant),
    )


AUDIT_COLUMNS = (
    "project_id, at, user_id, token_name, request_id, operation, ids, status, "
    "path_prefixes, memory_store_ids"
)


def audit_row(entry: AuditEntry) -> tuple[Any, ...]:
    """An audit entry's columns, in ``AUDIT_COLUMNS``' order (ids as JSON)."""
    return (
        entry.project_id,
        entry.at,
        entry.user_id,
        entry.token_name,
        entry.request_id,
        entry.operation,
        json.dumps(entry.ids),
        entry.status,
        *grant_columns(entry.grant),
    )

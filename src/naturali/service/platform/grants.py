"""The checks of a caller's grant (model.py Grant: path prefixes and memory stores) that the
services make where what is asked for names a path or a store. What lies outside a grant is
not there for the caller: a read of it is 404, as for an id that does not exist, so existence
does not leak; a write into it is 403 ``outside_grant``, decided from the path or the store id
asked for alone, never from what exists there."""

from __future__ import annotations

from naturali.errors import Forbidden, NotFound
from naturali.model import Grant, User


def outside(what: str, param: str | None = None) -> Forbidden:
    return Forbidden(
        f"{what} is outside what this caller was granted", code="outside_grant", param=param
    )


def writable_path(user: User, path: str, param: str = "path") -> None:
    """A document or source may be written at ``path``."""
    if not user.grant.sees_path(path):
        raise outside(f"path {path!r}", param)


def writable_store(user: User, store_id: str) -> None:
    if not user.grant.sees_store(store_id):
        raise outside(f"memory store {store_id!r}", "memory_store_id")


def readable_store(user: User, store_id: str) -> None:
    if not user.grant.sees_store(store_id):
        raise store_not_found(store_id)


def store_not_found(store_id: str) -> NotFound:
    return NotFound(
        f"memory store {store_id} not found", code="memory_store_not_found", param="memory_store_id"
    )


def new_stores(user: User) -> None:
    """A store may be made: not by a caller limited to some stores (the new one is not among
    them)."""
    if user.grant.stores is not None:
        raise outside("a new memory store")


def whole_project(user: User) -> None:
    """What acts on the whole project (its settings, its audit trail) needs all of it."""
    if not user.grant.whole:
        raise outside("the whole project")


def covered(user: User, granted: Grant, param: str = "path_prefixes") -> None:
    """A caller gives no one (a token, a member) more than it holds."""
    if not user.grant.covers(granted):
        raise outside("a grant wider than this caller's", param)

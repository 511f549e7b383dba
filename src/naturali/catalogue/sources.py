"""Sources: Git repositories and web sites a project's documents mirror, synced by the
servers on a schedule or when asked."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from naturali.catalogue.operation import PROJECT, NoFields, Operation, Target
from naturali.contracts.resources import Deleted, SourceList, SourceOut
from naturali.model import User
from naturali.service import requests as req
from naturali.service.syncing.source_requests import SourceCreate, SourceUpdate

if TYPE_CHECKING:
    from naturali.service.container import Services

SOURCE = PROJECT + "/sources/{source_id}"


def _create(s: Services, user: User, t: Target, r: SourceCreate) -> SourceOut:
    return SourceOut.of(s.sources.create(user, t.project_id, r))


def _list(s: Services, user: User, t: Target, r: Any) -> SourceList:
    return SourceList(data=[SourceOut.of(x) for x in s.sources.list(user, t.project_id)])


def _get(s: Services, user: User, t: Target, r: Any) -> SourceOut:
    return SourceOut.of(s.sources.get(user, t.project_id, t.item))


def _update(s: Services, user: User, t: Target, r: SourceUpdate) -> SourceOut:
    return SourceOut.of(s.sources.update(user, t.project_id, t.item, r))


def _delete(s: Services, user: User, t: Target, r: req.SourceDeleteQuery) -> Deleted:
    s.sources.delete(user, t.project_id, t.item, r.keep_documents)
    return Deleted(id=t.item)


def _sync(s: Services, user: User, t: Target, r: Any) -> SourceOut:
    return SourceOut.of(s.sources.sync(user, t.project_id, t.item))


_entry = partial(Operation, tag="sources")


SOURCES: tuple[Operation, ...] = (
    _entry(
        "create_source",
        "Mirror a Git repository under ``path``; with ``every``, the servers sync it on that "
        "schedule (the first sync at once).",
        SourceCreate,
        SourceOut,
        "write",
        "POST",
        PROJECT + "/sources",
        _create,
        sdk="sources.create",
        status=201,
        errors=(403,),
    ),
    _entry(
        "list_sources",
        "",
        NoFields,
        SourceList,
        "read",
        "GET",
        PROJECT + "/sources",
        _list,
        sdk="sources.list",
        errors=(),
    ),
    _entry(
        "get_source",
        "The source, with what its last sync did and when the next one is due.",
        NoFields,
        SourceOut,
        "read",
        "GET",
        SOURCE,
        _get,
        sdk="sources.get",
        errors=(),
    ),
    _entry(
        "update_source",
        "Change its settings; its documents follow at the next sync.",
        SourceUpdate,
        SourceOut,
        "write",
        "PATCH",
        SOURCE,
        _update,
        sdk="sources.update",
        errors=(403,),
    ),
    _entry(
        "delete_source",
        "",
        req.SourceDeleteQuery,
        Deleted,
        "write",
        "DELETE",
        SOURCE,
        _delete,
        sdk="sources.delete",
        errors=(403,),
    ),
    _entry(
        "sync_source",
        "Sync now: a server takes it at once (``sync_requested`` until it begins).",
        NoFields,
        SourceOut,
        "write",
        "POST",
        SOURCE + "/sync",
        _sync,
        sdk="sources.sync",
        status=202,
        errors=(403,),
    ),
)

"""A project's memory stores and the memories in them (their listing is a tool,
catalogue/knowledge.py; their records tools are catalogue/records.py)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from naturali.catalogue.operation import PROJECT, NoFields, Operation, Target
from naturali.contracts.resources import Deleted, MemoryList, MemoryOut, MemoryStoreOut
from naturali.model import User
from naturali.service import requests as req

if TYPE_CHECKING:
    from naturali.service.container import Services

STORES = PROJECT + "/memory_stores"
STORE = STORES + "/{memory_store_id}"
MEMORIES = STORE + "/memories"
MEMORY = MEMORIES + "/{memory_id}"


def _create_store(s: Services, user: User, t: Target, r: req.MemoryStoreCreate) -> MemoryStoreOut:
    return MemoryStoreOut.of(s.memories.create_store(user, t.project_id, r.name, r.tags))


def _get_store(s: Services, user: User, t: Target, r: Any) -> MemoryStoreOut:
    return MemoryStoreOut.of(s.memories.get_store(user, t.project_id, t.store_id))


def _update_store(s: Services, user: User, t: Target, r: req.MemoryStoreUpdate) -> MemoryStoreOut:
    return MemoryStoreOut.of(
        s.memories.update_store(user, t.project_id, t.store_id, r.name, r.tags)
    )


def _delete_store(s: Services, user: User, t: Target, r: Any) -> Deleted:
    s.memories.delete_store(user, t.project_id, t.store_id)
    return Deleted(id=t.store_id)


def _create(s: Services, user: User, t: Target, r: req.MemoryCreate) -> MemoryOut:
    memory = s.memories.create(user, t.project_id, t.store_id, r.content, r.tags, r.title)
    return MemoryOut.of(memory)


def _list(s: Services, user: User, t: Target, r: Any) -> MemoryList:
    return MemoryList(
        data=[MemoryOut.of(m) for m in s.memories.list(user, t.project_id, t.store_id)]
    )


def _get(s: Services, user: User, t: Target, r: Any) -> MemoryOut:
    return MemoryOut.of(s.memories.get(user, t.project_id, t.store_id, t.item))


def _update(s: Services, user: User, t: Target, r: req.MemoryUpdate) -> MemoryOut:
    memory = s.memories.update(user, t.project_id, t.store_id, t.item, r.content, r.tags, r.title)
    return MemoryOut.of(memory)


def _delete(s: Services, user: User, t: Target, r: Any) -> Deleted:
    s.memories.delete(user, t.project_id, t.store_id, t.item)
    return Deleted(id=t.item)


_entry = partial(Operation, tag="memory stores")


MEMORY_STORES: tuple[Operation, ...] = (
    _entry(
        "create_store",
        "",
        req.MemoryStoreCreate,
        MemoryStoreOut,
        "write",
        "POST",
        STORES,
        _create_store,
        sdk="memory_stores.create",
        status=201,
    ),
    _entry(
        "get_store",
        "",
        NoFields,
        MemoryStoreOut,
        "read",
        "GET",
        STORE,
        _get_store,
        sdk="memory_stores.get",
        errors=(),
    ),
    _entry(
        "update_store",
        "",
        req.MemoryStoreUpdate,
        MemoryStoreOut,
        "write",
        "PATCH",
        STORE,
        _update_store,
        sdk="memory_stores.update",
    ),
    _entry(
        "delete_store",
        "",
        NoFields,
        Deleted,
        "owner",
        "DELETE",
        STORE,
        _delete_store,
        sdk="memory_stores.delete",
        errors=(403,),
    ),
    _entry(
        "create_memory",
        "",
        req.MemoryCreate,
        MemoryOut,
        "write",
        "POST",
        MEMORIES,
        _create,
        sdk="memory_stores.create_memory",
        status=201,
    ),
    _entry(
        "list_memories",
        "",
        NoFields,
        MemoryList,
        "read",
        "GET",
        MEMORIES,
        _list,
        sdk="memory_stores.list_memories",
    ),
    _entry(
        "get_memory",
        "",
        NoFields,
        MemoryOut,
        "read",
        "GET",
        MEMORY,
        _get,
        sdk="memory_stores.get_memory",
    ),
    _entry(
        "update_memory",
        "",
        req.MemoryUpdate,
        MemoryOut,
        "write",
        "PATCH",
        MEMORY,
        _update,
        sdk="memory_stores.update_memory",
    ),
    _entry(
        "delete_memory",
        "Withdraws the memory's record: it leaves search; the file stays, withdrawn.",
        NoFields,
        Deleted,
        "write",
        "DELETE",
        MEMORY,
        _delete,
        sdk="memory_stores.delete_memory",
    ),
)

"""Memory stores and their memories."""

from __future__ import annotations

from fastapi import APIRouter

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.resources import (
    Deleted,
    MemoryList,
    MemoryOut,
    MemoryStoreOut,
)
from naturali.service.requests import (
    MemoryCreate,
    MemoryStoreCreate,
    MemoryStoreUpdate,
    MemoryUpdate,
)

router = APIRouter(prefix="/v1/projects/{project_id}/memory_stores", tags=["memory stores"])


@router.post(
    "", status_code=201, response_model=MemoryStoreOut, responses=errors.responses(403, 409)
)
def create_store(
    project_id: str, body: MemoryStoreCreate, user: CurrentUser, svc: Service
) -> MemoryStoreOut:
    return MemoryStoreOut.of(svc.memories.create_store(user, project_id, body.name, body.tags))


@router.get("/{memory_store_id}", response_model=MemoryStoreOut)
def get_store(
    project_id: str, memory_store_id: str, user: CurrentUser, svc: Service
) -> MemoryStoreOut:
    return MemoryStoreOut.of(svc.memories.get_store(user, project_id, memory_store_id))


@router.patch(
    "/{memory_store_id}", response_model=MemoryStoreOut, responses=errors.responses(403, 409)
)
def update_store(
    project_id: str,
    memory_store_id: str,
    body: MemoryStoreUpdate,
    user: CurrentUser,
    svc: Service,
) -> MemoryStoreOut:
    store = svc.memories.update_store(user, project_id, memory_store_id, body.name, body.tags)
    return MemoryStoreOut.of(store)


@router.delete("/{memory_store_id}", response_model=Deleted, responses=errors.responses(403))
def delete_store(project_id: str, memory_store_id: str, user: CurrentUser, svc: Service) -> Deleted:
    svc.memories.delete_store(user, project_id, memory_store_id)
    return Deleted(id=memory_store_id)


@router.post(
    "/{memory_store_id}/memories",
    status_code=201,
    response_model=MemoryOut,
    responses=errors.responses(403, 409),
)
def create_memory(
    project_id: str, memory_store_id: str, body: MemoryCreate, user: CurrentUser, svc: Service
) -> MemoryOut:
    memory = svc.memories.create(
        user, project_id, memory_store_id, body.content, body.tags, body.title
    )
    return MemoryOut.of(memory)


@router.get(
    "/{memory_store_id}/memories", response_model=MemoryList, responses=errors.responses(409)
)
def list_memories(
    project_id: str, memory_store_id: str, user: CurrentUser, svc: Service
) -> MemoryList:
    memories = svc.memories.list(user, project_id, memory_store_id)
    return MemoryList(data=[MemoryOut.of(m) for m in memories])


@router.get(
    "/{memory_store_id}/memories/{memory_id}",
    response_model=MemoryOut,
    responses=errors.responses(409),
)
def get_memory(
    project_id: str, memory_store_id: str, memory_id: str, user: CurrentUser, svc: Service
) -> MemoryOut:
    return MemoryOut.of(svc.memories.get(user, project_id, memory_store_id, memory_id))


@router.patch(
    "/{memory_store_id}/memories/{memory_id}",
    response_model=MemoryOut,
    responses=errors.responses(403, 409),
)
def update_memory(
    project_id: str,
    memory_store_id: str,
    memory_id: str,
    body: MemoryUpdate,
    user: CurrentUser,
    svc: Service,
) -> MemoryOut:
    memory = svc.memories.update(
        user, project_id, memory_store_id, memory_id, body.content, body.tags, body.title
    )
    return MemoryOut.of(memory)


@router.delete(
    "/{memory_store_id}/memories/{memory_id}",
    response_model=Deleted,
    responses=errors.responses(403, 409),
)
def delete_memory(
    project_id: str, memory_store_id: str, memory_id: str, user: CurrentUser, svc: Service
) -> Deleted:
    """Withdraws the memory's record: it leaves search; the file stays, withdrawn."""
    svc.memories.delete(user, project_id, memory_store_id, memory_id)
    return Deleted(id=memory_id)

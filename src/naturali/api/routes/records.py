"""The records tools over HTTP: parameters as JSON bodies named as the spec names them;
responses are complete hits with index, coverage and freshness."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.records import (
    GrepResult,
    LookupResult,
    RecordResult,
    RecordsResult,
)
from naturali.service.requests import AS_OF, GrepRequest, Instant, LookupRequest, RecordsRequest

router = APIRouter(
    prefix="/v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge",
    # Every store operation may meet a state.sqlite of another store or a vault over its
    # file limit (409), besides its own conflicts.
    responses=errors.responses(409),
    tags=["records"],
)


@router.post("/grep", response_model=GrepResult, response_model_exclude_unset=True)
def knowledge_grep(
    project_id: str, memory_store_id: str, body: GrepRequest, user: CurrentUser, svc: Service
) -> GrepResult:
    """FTS5/BM25 keyword search over title, aliases and body; superseded wording finds the
    current record. Returns hits, total, offset, nextOffset, snapshot, index, coverage and
    freshness."""
    return svc.records.grep(user, project_id, memory_store_id, body)


@router.post("/lookup", response_model=LookupResult, response_model_exclude_unset=True)
def knowledge_lookup(
    project_id: str, memory_store_id: str, body: LookupRequest, user: CurrentUser, svc: Service
) -> LookupResult:
    """Exact id, full title or alias: status found, ambiguous or missing."""
    return svc.records.lookup(user, project_id, memory_store_id, body)


@router.post("/records", response_model=RecordsResult, response_model_exclude_unset=True)
def knowledge_records(
    project_id: str, memory_store_id: str, body: RecordsRequest, user: CurrentUser, svc: Service
) -> RecordsResult:
    """The exhaustive inventory of available records, by id, paginated."""
    return svc.records.inventory(user, project_id, memory_store_id, body)


@router.get("/records/{record_id}", response_model=RecordResult, response_model_exclude_unset=True)
def knowledge_record(
    project_id: str,
    memory_store_id: str,
    record_id: str,
    user: CurrentUser,
    svc: Service,
    asOf: Annotated[Instant | None, Query(description=AS_OF)] = None,  # noqa: N803
) -> RecordResult:
    """One record whole, with all its evidence locators (``asOf``: its revision current at
    that instant)."""
    return svc.records.record(user, project_id, memory_store_id, record_id, asOf)

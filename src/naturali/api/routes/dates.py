"""Dates and chronicle over HTTP (docs/spec/retrieval-and-dates.md, "Dates and Chronicle")."""

from __future__ import annotations

from fastapi import APIRouter

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.records import LastSeenResult, TimelineResult
from naturali.service.requests import (
    ChronicleDayRequest,
    ChronicleSinceRequest,
    LastSeenRequest,
    TimelineRequest,
)

router = APIRouter(
    prefix="/v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge",
    # Every store operation may meet a state.sqlite of another store or a vault over its
    # file limit (409), besides its own conflicts.
    responses=errors.responses(409),
    tags=["dates"],
)


@router.post("/timeline", response_model=TimelineResult, response_model_exclude_unset=True)
def knowledge_timeline(
    project_id: str,
    memory_store_id: str,
    body: TimelineRequest,
    user: CurrentUser,
    svc: Service,
) -> TimelineResult:
    """Dated records by entity, kind (exact record.type), timeField, range, order,
    eligibility; includeSources; group "source" for an entity's timeline by source."""
    return svc.dates.timeline(user, project_id, memory_store_id, body)


@router.post("/chronicle/day", response_model=TimelineResult, response_model_exclude_unset=True)
def knowledge_chronicle_day(
    project_id: str,
    memory_store_id: str,
    body: ChronicleDayRequest,
    user: CurrentUser,
    svc: Service,
) -> TimelineResult:
    """One day, or its Monday–Sunday week, in an IANA time zone (UTC by default)."""
    return svc.dates.chronicle_day(user, project_id, memory_store_id, body)


@router.post("/chronicle/since", response_model=TimelineResult, response_model_exclude_unset=True)
def knowledge_chronicle_since(
    project_id: str,
    memory_store_id: str,
    body: ChronicleSinceRequest,
    user: CurrentUser,
    svc: Service,
) -> TimelineResult:
    """Occurrence-time range, oldest first (not "recently imported")."""
    return svc.dates.chronicle_since(user, project_id, memory_store_id, body)


@router.post(
    "/chronicle/last_seen", response_model=LastSeenResult, response_model_exclude_unset=True
)
def knowledge_chronicle_last_seen(
    project_id: str,
    memory_store_id: str,
    body: LastSeenRequest,
    user: CurrentUser,
    svc: Service,
) -> LastSeenResult:
    """Latest dated context for an entity at or before occurredOnOrBefore (default now)."""
    return svc.dates.last_seen(user, project_id, memory_store_id, body)

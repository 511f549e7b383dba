"""Writing knowledge over HTTP: save, correct, withdraw, resume; receipts and history."""

from __future__ import annotations

from fastapi import APIRouter

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.records import HistoryResult, Receipt, ResumeResult
from naturali.service.requests import (
    CorrectRequest,
    ResumeRequest,
    SaveRequest,
    WithdrawRequest,
)

router = APIRouter(
    prefix="/v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge",
    # Every store operation may meet a state.sqlite of another store or a vault over its
    # file limit (409), besides its own conflicts.
    responses=errors.responses(409),
    tags=["records"],
)


@router.post(
    "/save",
    response_model=Receipt,
    response_model_exclude_unset=True,
    responses=errors.responses(403, 409),
)
def knowledge_save(
    project_id: str, memory_store_id: str, body: SaveRequest, user: CurrentUser, svc: Service
) -> Receipt:
    """Create a record, or update one fenced by expectedRevision and expectedHash (409 when
    stale). Returns the publication receipt."""
    return svc.mutations.save(user, project_id, memory_store_id, body)


@router.post(
    "/correct",
    response_model=Receipt,
    response_model_exclude_unset=True,
    responses=errors.responses(403, 409),
)
def knowledge_correct(
    project_id: str, memory_store_id: str, body: CorrectRequest, user: CurrentUser, svc: Service
) -> Receipt:
    """Supersede a claim or relationship with a replacement (one receipt for both)."""
    return svc.mutations.correct(user, project_id, memory_store_id, body)


@router.post(
    "/withdraw",
    response_model=Receipt,
    response_model_exclude_unset=True,
    responses=errors.responses(403, 409),
)
def knowledge_withdraw(
    project_id: str, memory_store_id: str, body: WithdrawRequest, user: CurrentUser, svc: Service
) -> Receipt:
    """Withdraw a record with a reason; it leaves every query and stays in history."""
    return svc.mutations.withdraw(user, project_id, memory_store_id, body)


@router.post(
    "/resume",
    response_model=ResumeResult,
    response_model_exclude_unset=True,
    responses=errors.responses(403),
)
def knowledge_resume(
    project_id: str, memory_store_id: str, body: ResumeRequest, user: CurrentUser, svc: Service
) -> ResumeResult:
    """Finish interrupted writes and retry pending Git commits."""
    return svc.mutations.resume(user, project_id, memory_store_id)


@router.get("/mutations/{requestId}", response_model=Receipt, response_model_exclude_unset=True)
def knowledge_mutation(
    project_id: str,
    memory_store_id: str,
    requestId: str,
    user: CurrentUser,
    svc: Service,
) -> Receipt:
    """A mutation's publication receipt (indexed, git.state, git.commit)."""
    return svc.mutations.mutation(user, project_id, memory_store_id, requestId)


@router.get(
    "/records/{record_id}/history",
    response_model=HistoryResult,
    response_model_exclude_unset=True,
)
def knowledge_history(
    project_id: str, memory_store_id: str, record_id: str, user: CurrentUser, svc: Service
) -> HistoryResult:
    """A record's revisions with their receipts."""
    return svc.mutations.history(user, project_id, memory_store_id, record_id)

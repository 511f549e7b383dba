"""Knowledge search (docs/spec/search-api.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.resources import KnowledgeSearchResponse
from naturali.service.requests import SearchRequest

router = APIRouter(prefix="/v1/projects/{project_id}/knowledge", tags=["knowledge"])


@router.post(
    "/search",
    response_model=KnowledgeSearchResponse,
    # 409: a memory store taking part has another store's state.sqlite or too many files.
    responses=errors.responses(409),
)
def search_knowledge(project_id: str, body: SearchRequest, user: CurrentUser, svc: Service) -> Any:
    """One query across a project's documents and memories, ranked, with provenance.

    Without a query the call is a fetch: results in a stable order (documents by path,
    version, chunk order; then memories by store name, memory id, chunk order), no
    similarity_score.
    """
    results = svc.search.search(user, project_id, body)
    # The service built and validated each result model; serialize them once, without a
    # second validation pass of the whole response on this hot path.
    return JSONResponse(
        {"results": [r.model_dump(mode="json", exclude_unset=True) for r in results]}
    )

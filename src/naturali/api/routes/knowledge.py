"""Knowledge search (spec: search-api.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.api.schemas import KnowledgeSearchResponse
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
    # The results are built by the service in the documented shape; skip a second validation
    # pass on this hot path (the response model still documents it in OpenAPI).
    return JSONResponse({"results": results})

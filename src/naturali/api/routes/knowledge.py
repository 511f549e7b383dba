"""Knowledge search (docs/spec/search-api.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.api.query_ahead import query_ahead
from naturali.api.search_answer import answered
from naturali.contracts.resources import KnowledgeSearchResponse
from naturali.service.requests import SearchRequest

router = APIRouter(prefix="/v1/projects/{project_id}/knowledge", tags=["knowledge"])


@router.post(
    "/search",
    response_model=KnowledgeSearchResponse,
    # 409: a memory store taking part has another store's state.sqlite or too many files.
    responses=errors.responses(409),
)
async def search_knowledge(
    project_id: str, body: SearchRequest, user: CurrentUser, svc: Service, request: Request
) -> Any:
    """One query across a project's documents and memories, ranked, with provenance.

    Without a query the call is a fetch: results in a stable order (documents by path,
    version, chunk order; then memories by store name, memory id, chunk order), no
    similarity_score.
    """
    ahead = query_ahead(request, body.query)  # embedding since the body arrived
    return Response(
        await answered(svc, user, project_id, body, ahead), media_type="application/json"
    )

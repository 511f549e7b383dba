"""Knowledge search (docs/spec/search-api.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from naturali.api import errors, search_lanes
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
async def search_knowledge(
    project_id: str, body: SearchRequest, user: CurrentUser, svc: Service
) -> Any:
    """One query across a project's documents and memories, ranked, with provenance.

    Without a query the call is a fetch: results in a stable order (documents by path,
    version, chunk order; then memories by store name, memory id, chunk order), no
    similarity_score.
    """
    # The query embeds on its own thread while the search waits for a lane and reads the
    # store; the results are written once, by pydantic's JSON writer (the service built and
    # validated each result model: no second validation pass).
    ahead = svc.search.embed_ahead(body.query) if body.query is not None else None

    def answer() -> bytes:
        results = svc.search.search(user, project_id, body, embedding=ahead)
        response = KnowledgeSearchResponse.model_construct(results=results)
        return response.model_dump_json(exclude_unset=True).encode()

    lanes = svc.concurrency.lanes
    return Response(await search_lanes.in_lane(lanes, answer), media_type="application/json")

"""``naturali search-knowledge``: the search API from the shell (docs/spec/search-api.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from naturali.cli.common import (
    BaseUrl,
    DataDir,
    Token,
    client,
    errors,
    fail,
    local_service,
    parse_pairs,
    print_json,
)

if TYPE_CHECKING:
    from naturali.client import KnowledgeSearchResponse
    from naturali.client._models import Explanation


def search_knowledge(
    project_id: Annotated[str, typer.Option("--project-id", help="Project id")],
    query: Annotated[str | None, typer.Option(help="The text to search semantically")] = None,
    limit: Annotated[int | None, typer.Option(help="Maximum results (1–100, default 10)")] = None,
    min_similarity: Annotated[
        float | None, typer.Option(help="Minimum cosine for vector candidates")
    ] = None,
    document_paths: Annotated[
        list[str] | None, typer.Option("--document-paths", help="Path prefix (repeatable)")
    ] = None,
    document_ids: Annotated[
        list[str] | None, typer.Option("--document-ids", help="Document id (repeatable)")
    ] = None,
    memory_store_ids: Annotated[
        list[str] | None, typer.Option("--memory-store-ids", help="Memory store id (repeatable)")
    ] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option("--tags", help="key=value that results must carry (repeatable)"),
    ] = None,
    include_documents: Annotated[
        bool, typer.Option("--include-documents/--no-include-documents")
    ] = True,
    include_memories: Annotated[
        bool, typer.Option("--include-memories/--no-include-memories")
    ] = True,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show why each result ranked where it did")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw response")] = False,
    local: Annotated[bool, typer.Option("--local", help="Work on the data dir, no server")] = False,
    data_dir: Annotated[Path | None, DataDir] = None,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Search a project's documents and memories; a table by default, --json for raw."""
    body: dict[str, Any] = {
        "query": query,
        "limit": limit,
        "min_similarity": min_similarity,
        "document_paths": document_paths,
        "document_ids": document_ids,
        "memory_store_ids": memory_store_ids,
        "tags": parse_pairs(tags, "--tags"),
        "include_documents": None if include_documents else False,
        "include_memories": None if include_memories else False,
        "explain": True if explain else None,
    }
    body = {k: v for k, v in body.items() if v is not None}
    with errors():
        if local:
            response = _local(project_id, body, data_dir, token)
        else:
            with client(base_url, token) as api:
                response = api.knowledge.search_knowledge(project_id=project_id, **body)
    if as_json:
        print_json(response.model_dump(mode="json", exclude_unset=True))
    else:
        _table(response)


def _table(response: KnowledgeSearchResponse) -> None:
    if not response.results:
        typer.echo("no results")
        return
    for i, hit in enumerate(response.results, start=1):
        similarity = "" if hit.similarity_score is None else f"  sim {hit.similarity_score:.3f}"
        if hit.source_type == "document":
            where = hit.path + (f" p.{hit.page}" if hit.page else "")
        else:
            where = f"memory {hit.memory_id} ({hit.memory_store_name})"
        text = " ".join((hit.content or "").split())
        typer.echo(f"{i:>2}. {hit.score:.4f}{similarity}  {where}")
        typer.echo(f"    {text[:160]}{'…' if len(text) > 160 else ''}")
        if hit.explain is not None:
            typer.echo("    why: " + _reasons(hit.explain))


def _local(
    project_id: str, body: dict[str, Any], data_dir: Path | None, token: str | None
) -> KnowledgeSearchResponse:
    # Imported here: the client path should not pay for loading the service stack.
    from pydantic import ValidationError

    from naturali.client import KnowledgeSearchResponse
    from naturali.service.invalid_input import invalid_request
    from naturali.service.requests import SearchRequest

    naturali = local_service(data_dir)
    try:
        request = SearchRequest.model_validate(body)
    except ValidationError as exc:
        fail(invalid_request(exc.errors()).message, 2)
    user = naturali.auth.acting_user(project_id, token or naturali.settings.token)
    results = naturali.search.search(user, project_id, request)
    wire = [r.model_dump(mode="json", exclude_unset=True) for r in results]
    return KnowledgeSearchResponse.model_validate({"results": wire})


def _reasons(why: Explanation) -> str:
    vector = f"vector #{why.vector_rank} cos {why.cosine:.3f}" if why.vector_rank else "vector —"
    lexical = (
        f"lexical #{why.lexical_rank} bm25 {why.bm25:.2f}" if why.lexical_rank else "lexical —"
    )
    return f"{vector} · {lexical} · fused {why.fused:.4f}"

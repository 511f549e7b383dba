"""``naturali search-knowledge``: the search API from the shell (spec: search-api.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from naturali.cli.common import BaseUrl, Token, client, errors, parse_pairs, print_json


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
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw response")] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Search a project's documents and memories; a table by default, --json for raw."""
    with errors(), client(base_url, token) as api:
        response = api.knowledge.search_knowledge(
            project_id=project_id,
            query=query,
            limit=limit,
            min_similarity=min_similarity,
            document_paths=document_paths,
            document_ids=document_ids,
            memory_store_ids=memory_store_ids,
            tags=parse_pairs(tags, "--tags"),
            include_documents=None if include_documents else False,
            include_memories=None if include_memories else False,
        )
    if as_json:
        print_json(response.model_dump(mode="json", exclude_none=False))
        return
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

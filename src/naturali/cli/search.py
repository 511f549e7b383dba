"""``naturali search-knowledge``: the search API from the shell (docs/spec/search-api.md)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from naturali.cli.common import BaseUrl, DataDir, Token, client, errors, local_service, print_json
from naturali.cli.model_options import field_parameters, keyword, request_from, with_parameters
from naturali.service.requests import SearchRequest

if TYPE_CHECKING:
    from naturali_client import KnowledgeSearchResponse
    from naturali_client._models import Explanation


def _search(**given: Any) -> None:
    own = {k: given.pop(k) for k in OWN}
    request = request_from(SearchRequest, given)
    with errors():
        if own["local"]:
            response = _local(own["project_id"], request, own["data_dir"], own["token"])
        else:
            body = request.model_dump(mode="json", exclude_unset=True)
            with client(own["base_url"], own["token"]) as api:
                response = api.knowledge.search_knowledge(project_id=own["project_id"], **body)
    if own["as_json"]:
        print_json(response.model_dump(mode="json", exclude_unset=True))
    else:
        _table(response)


def _parameters() -> list[inspect.Parameter]:
    return [
        keyword("project_id", Annotated[str, typer.Option("--project-id", help="Project id")]),
        *field_parameters(SearchRequest, SearchRequest.model_fields),
        keyword(
            "as_json", Annotated[bool, typer.Option("--json", help="Print the raw response")], False
        ),
        keyword(
            "local",
            Annotated[bool, typer.Option("--local", help="Work on the data dir, no server")],
            False,
        ),
        keyword("data_dir", Annotated[Path | None, DataDir], None),
        keyword("base_url", Annotated[str | None, BaseUrl], None),
        keyword("token", Annotated[str | None, Token], None),
    ]


def _command() -> Callable[..., None]:
    """The command, its options made from ``SearchRequest``'s fields: a new search field is an
    option here with no edit."""

    def search_knowledge(**given: Any) -> None:
        _search(**given)

    return with_parameters(
        search_knowledge,
        _parameters(),
        "Search a project's documents and memories; a table by default, --json for raw.",
    )


OWN = ("project_id", "as_json", "local", "data_dir", "base_url", "token")
search_knowledge = _command()


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
    project_id: str, request: SearchRequest, data_dir: Path | None, token: str | None
) -> KnowledgeSearchResponse:
    # Imported here: the client path should not pay for loading the SDK's response models.
    from naturali.catalogue import BY_NAME
    from naturali.catalogue.operation import Target
    from naturali_client import KnowledgeSearchResponse

    naturali = local_service(data_dir)
    user = naturali.auth.acting_user(project_id, token or naturali.settings.token)
    answer = BY_NAME["knowledge_search"].invoke(naturali, user, Target(project_id), request)
    return KnowledgeSearchResponse.model_validate(
        answer.model_dump(mode="json", exclude_unset=True)
    )


def _reasons(why: Explanation) -> str:
    vector = f"vector #{why.vector_rank} cos {why.cosine:.3f}" if why.vector_rank else "vector —"
    lexical = (
        f"lexical #{why.lexical_rank} bm25 {why.bm25:.2f}" if why.lexical_rank else "lexical —"
    )
    # Reranked, the cross-encoder's score is what placed the hit (its score is the place's).
    rerank = f" · rerank {why.rerank:.3f} (orders these)" if why.rerank is not None else ""
    language = f" · {why.language}" if why.language else ""
    return f"{vector} · {lexical} · fused {why.fused:.4f}{rerank}{language}"

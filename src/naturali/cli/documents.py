"""``naturali documents``: a project's documents through a server, each with its status and
what it came back with (no text, pages read by OCR…): nothing skipped in silence."""

from __future__ import annotations

from typing import Annotated

import typer

from naturali.cli.common import BaseUrl, Token, client, errors, print_json

app = typer.Typer(rich_markup_mode=None, help="A project's documents: list.", no_args_is_help=True)


@app.command("list")
def list_documents(
    project_id: Annotated[str, typer.Option("--project-id", help="Project id")],
    path_prefix: Annotated[
        str | None, typer.Option("--path-prefix", help="Only paths starting with this")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the documents as JSON")] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """The project's documents by path: status, version, passages, pages, warnings."""
    with errors(), client(base_url, token) as api:
        documents = api.documents.list(project_id=project_id, path_prefix=path_prefix)
    if as_json:
        print_json([d.model_dump(mode="json") for d in documents])
        return
    for d in documents:
        pages = f", {d.page_count} pages" if d.page_count else ""
        if d.reading is not None and d.reading.ocr_pages:
            pages += f" ({len(d.reading.ocr_pages)} read by OCR)"
        if d.status == "processing" and d.pages_total:
            pages += f"; reading pages by OCR {d.pages_done}/{d.pages_total}"
        typer.echo(f"{d.path}  {d.status}  v{d.version}, {d.chunk_count} passages{pages}")
        for warning in d.warnings:
            typer.secho(f"    warning: {warning}", fg=typer.colors.YELLOW)

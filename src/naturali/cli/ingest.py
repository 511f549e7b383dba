"""``naturali ingest DIR``: upload a directory tree through the API, with a progress bar."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from naturali.cli.common import BaseUrl, Token, client, errors
from naturali.client import NaturaliAPIError

SUFFIXES = {".md", ".markdown", ".txt", ".pdf"}


def ingest(
    directory: Annotated[Path, typer.Argument(exists=True, file_okay=False, readable=True)],
    project: Annotated[str, typer.Option("--project", help="Project id")],
    path: Annotated[str, typer.Option("--path", help="Logical path prefix, e.g. /handbook/")] = "/",
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Ingest every Markdown, text and PDF file under DIRECTORY at PATH + its relative path.
    Files already there get a new version (none if unchanged)."""
    prefix = path if path.endswith("/") else path + "/"
    files = sorted(
        f
        for f in directory.rglob("*")
        if f.is_file()
        and f.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in f.relative_to(directory).parts)
    )
    failed = 0
    with errors(), client(base_url, token) as api:
        existing = {
            d.path: d.id for d in api.documents.list(project_id=project, path_prefix=prefix)
        }
        with typer.progressbar(files, label="Ingesting", show_pos=True) as bar:
            for file in bar:
                logical = prefix + file.relative_to(directory).as_posix()
                try:
                    if logical in existing:
                        api.documents.replace(
                            project_id=project, document_id=existing[logical], file=file
                        )
                    else:
                        api.documents.upload(project_id=project, file=file, path=logical)
                except NaturaliAPIError as exc:
                    if exc.status in (401, 404):
                        raise
                    failed += 1
                    typer.secho(f"\n{logical}: {exc.message}", err=True, fg=typer.colors.YELLOW)
    typer.echo(f"{len(files) - failed} of {len(files)} files ingested under {prefix}")
    if failed:
        raise typer.Exit(1)

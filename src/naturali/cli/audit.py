"""``naturali audit``: a project's audit trail, through a server (owners)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from naturali.cli.common import BaseUrl, Token, client, errors


def audit(
    project: Annotated[str, typer.Option("--project-id", help="Project id")],
    since: Annotated[str | None, typer.Option(help="From this instant (ISO 8601)")] = None,
    until: Annotated[str | None, typer.Option(help="Before this instant (ISO 8601)")] = None,
    operation: Annotated[
        str | None,
        typer.Option(help="One operation, e.g. 'POST /v1/projects/{project_id}/documents'"),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON array instead of a JSON object a line")
    ] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Print the project's writes, oldest first, one JSON object a line: who (user, token),
    what (operation, ids), when, the request id and the status."""
    filters = {"since": since, "until": until, "operation": operation}
    with errors(), client(base_url, token) as api:
        entries = api.projects.audit(project_id=project, **filters)
    if as_json:
        typer.echo(json.dumps(entries, ensure_ascii=False))
        return
    for entry in entries:
        typer.echo(json.dumps(entry, ensure_ascii=False))

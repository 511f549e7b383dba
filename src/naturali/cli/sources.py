"""``naturali sources``: Git repositories a project mirrors, synced by the server itself
(``naturali sync`` is the same for a folder on this machine)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from naturali.cli.common import BaseUrl, Token, client, errors, print_json

app = typer.Typer(
    rich_markup_mode=None,
    help="Git repositories the server keeps a project's documents in step with.",
    no_args_is_help=True,
)
Project = Annotated[str, typer.Option("--project-id", help="Project id")]
SourceId = Annotated[str, typer.Argument(help="The source's id (src_…)")]
Ref = Annotated[str | None, typer.Option("--ref", help="A branch or tag (default: HEAD)")]
Folder = Annotated[str | None, typer.Option("--folder", help="Only this sub-folder")]
Include = Annotated[
    list[str] | None, typer.Option("--include", help="Only files matching (repeatable)")
]
Exclude = Annotated[
    list[str] | None, typer.Option("--exclude", help="Leave out files matching (repeatable)")
]
Every = Annotated[str | None, typer.Option("--every", help="Sync on this schedule: 15m, 1h, 1d")]


@app.command("create")
def create(
    url: Annotated[str, typer.Argument(help="A repository's URL, a site's start page or sitemap")],
    project: Project,
    kind: Annotated[str, typer.Option("--kind", help="git or web")] = "git",
    path: Annotated[str, typer.Option("--path", help="Logical prefix of its documents")] = "/",
    ref: Ref = None,
    folder: Folder = None,
    include: Include = None,
    exclude: Exclude = None,
    every: Every = None,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Mirror a repository under --path; with --every the server syncs it on that schedule."""
    with errors(), client(base_url, token) as api:
        made = api.sources.create(
            project_id=project, url=url, kind=kind, path=path, ref=ref, folder=folder,
            include=include, exclude=exclude, every=every,
        )  # fmt: skip
    print_json(made.model_dump(mode="json"))


@app.command("list")
def list_sources(
    project: Project,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sources as JSON")] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """The project's sources, each with its last run and next one."""
    with errors(), client(base_url, token) as api:
        sources = api.sources.list(project_id=project)
    if as_json:
        print_json([s.model_dump(mode="json") for s in sources])
        return
    for s in sources:
        typer.echo(
            f"{s.id}  {s.url}  → {s.path}  {_last(s.last_run)}  next {s.next_run_at or 'manual'}"
        )


@app.command("get")
def get(
    source_id: SourceId,
    project: Project,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """One source, its settings and what its last sync did, as JSON."""
    with errors(), client(base_url, token) as api:
        print_json(api.sources.get(project_id=project, source_id=source_id).model_dump(mode="json"))


@app.command("update")
def update(
    source_id: SourceId,
    project: Project,
    url: Annotated[str | None, typer.Option("--url", help="A new URL")] = None,
    ref: Ref = None,
    folder: Folder = None,
    include: Include = None,
    exclude: Exclude = None,
    every: Every = None,
    manual: Annotated[bool, typer.Option("--manual", help="Stop syncing on a schedule")] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Change a source's settings; its documents follow at its next sync."""
    given = {"url": url, "ref": ref, "folder": folder, "include": include, "exclude": exclude}
    changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if every is not None or manual:
        changes["every"] = None if manual else every
    with errors(), client(base_url, token) as api:
        made = api.sources.update(project_id=project, source_id=source_id, **changes)
    print_json(made.model_dump(mode="json"))


@app.command("sync")
def sync(
    source_id: SourceId,
    project: Project,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for it (0: don't)")] = 600,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Sync now; waits for the run and says what it did (exit 1 if it failed)."""
    with errors(), client(base_url, token) as api:
        done = api.sources.sync(project_id=project, source_id=source_id, wait=wait or None)
    typer.echo(_last(done.last_run) if wait else f"sync of {source_id} requested")
    if wait and done.last_run is not None and (done.last_run.error or done.last_run.failed):
        raise typer.Exit(1)


@app.command("delete")
def delete(
    source_id: SourceId,
    project: Project,
    keep_documents: Annotated[
        bool, typer.Option("--keep-documents", help="Keep the documents it made")
    ] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Delete a source and, unless --keep-documents, the documents it made."""
    with errors(), client(base_url, token) as api:
        api.sources.delete(project_id=project, source_id=source_id, keep_documents=keep_documents)
    typer.echo(f"deleted {source_id}")


def _last(run: Any) -> str:
    if run is None:
        return "never synced"
    if run.error:
        return f"failed at {run.at}: {run.error}"
    counts = f"{run.created} created, {run.updated} updated, {run.deleted} deleted"
    failed = f", {len(run.failed)} failed" if run.failed else ""
    return f"synced {run.commit or ''} at {run.at}: {counts}, {run.unchanged} unchanged{failed}"

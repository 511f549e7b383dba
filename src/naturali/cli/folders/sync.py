"""``naturali sync DIR``: mirror a folder into a project under a path prefix. New files are
uploaded, changed ones get a new version, unchanged ones cost nothing (their SHA-256 is
compared with the document's ``content_hash`` first, so no body is sent), and with
``--delete`` documents under the prefix whose file is gone are deleted. What is left out
(cli/folders/folder.py: excludes, ``.naturaliignore``, hidden files, links out of the folder, files
refused before and unchanged since, files it cannot read) is named, each with why, and so is
every warning a document came back with (no text, …); a file it cannot read never stops the
run. It exits 1 only when something failed that had not failed before. ``naturali ingest`` is
the same without ``--delete``, with the same selection options."""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from naturali.cli.common import BaseUrl, Token, client, errors, settings
from naturali.cli.folders.folder import Folder, Refusals, scan, sha256
from naturali_client._errors import NaturaliAPIError

if TYPE_CHECKING:
    from naturali_client import Client

POLL_SECONDS = 0.5  # how often the documents still processing are looked at
UPLOADS_IN_FLIGHT = 4


Directory = Annotated[
    Path,
    typer.Argument(exists=True, file_okay=False, readable=True, help="The local folder to read"),
]
ProjectOption = Annotated[str, typer.Option("--project-id", help="Project id")]
PathOption = Annotated[str, typer.Option("--path", help="Logical path prefix, e.g. /handbook/")]
FollowOutside = Annotated[
    bool,
    typer.Option(
        "--follow-outside",
        help="Also upload files whose real path is outside DIRECTORY (symbolic links)",
    ),
]
Exclude = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Leave out paths matching PATTERN (gitignore syntax; repeatable; the folder's "
        ".naturaliignore is read too)",
    ),
]
IncludeHidden = Annotated[
    bool, typer.Option("--include-hidden", help="Also sync hidden files and folders")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the plan, change nothing")]
AsJson = Annotated[
    bool, typer.Option("--json", help="Print one machine-readable summary (for cron, CI)")
]


@dataclass
class Plan:
    create: list[tuple[str, Path, str]] = field(default_factory=list)  # path, file, sha256
    update: list[tuple[str, Path, str, str]] = field(default_factory=list)  # + document id
    delete: list[tuple[str, str]] = field(default_factory=list)  # path, document id
    refused_before: dict[str, str] = field(default_factory=dict)  # path → why
    unreadable: dict[str, str] = field(default_factory=dict)  # path → why (permissions, …)
    unchanged: int = 0

    @property
    def uploads(self) -> list[tuple[str, Path, str, str | None]]:
        created: list[tuple[str, Path, str, str | None]] = [(*c, None) for c in self.create]
        return created + [(p, f, h, d) for p, f, h, d in self.update]


@dataclass
class Outcome:
    """What a sync did: the events of each file, the failures and the warnings."""

    events: list[tuple[str, str]] = field(default_factory=list)  # (what, path)
    failed: dict[str, tuple[str, str]] = field(default_factory=dict)  # path → sha256, why
    warnings: dict[str, list[str]] = field(default_factory=dict)  # path → warnings


def plan(
    files: dict[str, Path],
    documents: dict[str, tuple[str, str]],
    delete: bool,
    refusals: Refusals | None = None,
) -> Plan:
    """What to do: ``documents`` maps a path under the prefix to (document id, content hash)."""
    out = Plan()
    for logical, file in files.items():
        try:
            digest, known = sha256(file), documents.get(logical)
        except OSError as exc:
            out.unreadable[logical] = exc.strerror or type(exc).__name__
            continue
        why = refusals.unchanged(logical, digest) if refusals and known is None else None
        if why is not None:
            out.refused_before[logical] = why
        elif known is None:
            out.create.append((logical, file, digest))
        elif digest == known[1]:
            out.unchanged += 1
        else:
            out.update.append((logical, file, digest, known[0]))
    if delete:
        out.delete = [(p, d) for p, (d, _) in sorted(documents.items()) if p not in files]
    return out


def sync(
    directory: Directory,
    project: ProjectOption,
    path: PathOption = "/",
    delete: Annotated[
        bool, typer.Option("--delete", help="Delete documents under the prefix whose file is gone")
    ] = False,
    dry_run: DryRun = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
    follow_outside: FollowOutside = False,
    exclude: Exclude = None,
    include_hidden: IncludeHidden = False,
    as_json: AsJson = False,
) -> None:
    """Mirror DIRECTORY into the project at PATH + each file's relative path: upload new
    files, new versions of changed ones, and with --delete remove what is gone. A file the
    server refused before is not sent again until it changes. Exits 1 when something failed
    that had not failed before."""
    prefix = path if path.endswith("/") else path + "/"
    folder = scan(
        directory,
        prefix,
        excludes=tuple(exclude or ()),
        hidden=include_hidden,
        outside=follow_outside,
    )
    with errors(), client(base_url, token) as api:
        documents = {
            d.path: (d.id, d.content_hash)
            for d in api.documents.list(project_id=project, path_prefix=prefix)
        }
        refusals = Refusals(settings(base_url=base_url).base_url, project, directory, prefix)
        todo = plan(folder.files, documents, delete, refusals)
        if dry_run:
            _print_plan(todo)
            return
        outcome = _apply(api, project, todo, quiet=as_json) if todo.uploads or todo.delete else None
    outcome = outcome or Outcome()
    refusals.save(outcome.failed, set(todo.refused_before))
    if as_json:
        print(json.dumps(_summary(prefix, folder, todo, outcome), indent=2))
    else:
        _report(directory, prefix, folder, todo, outcome)
    if outcome.failed:
        raise typer.Exit(1)


def ingest(
    directory: Directory,
    project: ProjectOption,
    path: PathOption = "/",
    dry_run: DryRun = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
    follow_outside: FollowOutside = False,
    exclude: Exclude = None,
    include_hidden: IncludeHidden = False,
    as_json: AsJson = False,
) -> None:
    """Upload every file naturali ingests under DIRECTORY at PATH + its relative path (naturali
    sync without --delete): new files, new versions of changed ones."""
    sync(
        directory,
        project,
        path,
        delete=False,
        dry_run=dry_run,
        base_url=base_url,
        token=token,
        follow_outside=follow_outside,
        exclude=exclude,
        include_hidden=include_hidden,
        as_json=as_json,
    )


def _print_plan(todo: Plan) -> None:
    for logical, _, _ in todo.create:
        typer.echo(f"create  {logical}")
    for logical, _, _, _ in todo.update:
        typer.echo(f"update  {logical}")
    for logical, _ in todo.delete:
        typer.echo(f"delete  {logical}")
    for logical in todo.refused_before:
        typer.echo(f"skip    {logical} (refused before, unchanged)")
    typer.echo(
        f"plan: {len(todo.create)} to create, {len(todo.update)} to update, "
        f"{len(todo.delete)} to delete, {todo.unchanged} unchanged (dry run: nothing changed)"
    )


def _summary(prefix: str, folder: Folder, todo: Plan, outcome: Outcome) -> dict[str, Any]:
    unreadable = _unreadable(prefix, folder, todo)
    return {
        "prefix": prefix,
        "created": [p for what, p in outcome.events if what == "created"],
        "updated": [p for what, p in outcome.events if what == "updated"],
        "deleted": [p for what, p in outcome.events if what == "deleted"],
        "unchanged": todo.unchanged,
        "failed": [{"path": p, "error": e} for p, (_, e) in outcome.failed.items()],
        "refused_before": [{"path": p, "error": e} for p, e in todo.refused_before.items()],
        "warnings": [{"path": p, "warnings": w} for p, w in outcome.warnings.items()],
        "skipped": {
            "outside_the_folder": folder.outside,
            "excluded": folder.excluded,
            "hidden": folder.hidden,
            "not_a_format_naturali_reads": folder.unread,
            "unreadable": [{"path": p, "error": e} for p, e in unreadable.items()],
        },
    }


def _unreadable(prefix: str, folder: Folder, todo: Plan) -> dict[str, str]:
    """The files and folders that could not be read, by their path in the folder."""
    return folder.unreadable | {p[len(prefix) :]: why for p, why in todo.unreadable.items()}


def _report(directory: Path, prefix: str, folder: Folder, todo: Plan, outcome: Outcome) -> None:
    """One line a file when the output is not a terminal; the summary and what to look at."""
    if not sys.stdout.isatty():
        for what, logical in outcome.events:
            typer.echo(f"{what:<8}{logical}")
    for relative in folder.outside:
        say(f"{relative}: skipped, a link to a file outside {directory} (--follow-outside)")
    for relative, why in _unreadable(prefix, folder, todo).items():
        say(f"{relative}: skipped, it cannot be read: {why}")
    for why, relatives in _left_out(folder).items():
        for relative in relatives:
            say(f"{relative}: skipped, {why}")
    for logical, why in todo.refused_before.items():
        say(f"{logical}: refused before and unchanged since, not sent again: {why}")
    for logical, warnings in outcome.warnings.items():
        for warning in warnings:
            say(f"{logical}: {warning}")
    for logical, (_, why) in outcome.failed.items():
        say(f"{logical}: {why}")
    if not todo.uploads and not todo.delete:
        typer.echo(f"nothing to do: {todo.unchanged} files under {prefix} are unchanged")
        return
    done = len(todo.uploads) - len(outcome.failed)
    skipped = len(todo.refused_before) + len(todo.unreadable) + folder.skipped
    typer.echo(
        f"{len(todo.create)} new, {len(todo.update)} changed, {len(todo.delete)} deleted, "
        f"{todo.unchanged} unchanged under {prefix}; {done} of {len(todo.uploads)} uploads made "
        f"it; {len(outcome.warnings)} with warnings; {skipped} skipped"
    )


def _left_out(folder: Folder) -> dict[str, list[str]]:
    return {
        "excluded (--exclude, .naturaliignore)": folder.excluded,
        "hidden (--include-hidden)": folder.hidden,
        "not a format naturali reads": folder.unread,
    }


def say(message: str) -> None:
    typer.secho(message, err=True, fg=typer.colors.YELLOW)


def _apply(api: Client, project: str, todo: Plan, *, quiet: bool) -> Outcome:
    """Upload and delete, then follow the background jobs to the end, with a progress bar of
    files and of chunks embedded (on a terminal, unless ``quiet``)."""
    # Imported here: rich's progress bar is loaded only by a sync that uploads.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    outcome = Outcome()
    console = Console(stderr=True, quiet=quiet)
    columns = (TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        files = progress.add_task("files", total=len(todo.uploads) + len(todo.delete))
        pending: dict[str, tuple[str, str]] = {}  # document id → (path, sha256)
        # A few uploads in flight: a small file's one or two chunks leave the server's other
        # embedding stream idle, so one at a time would use half of a 2-core server.
        with ThreadPoolExecutor(UPLOADS_IN_FLIGHT) as uploads:
            sent = {
                uploads.submit(_upload, api, project, logical, file, document_id): (
                    logical,
                    digest,
                    document_id,
                )
                for logical, file, digest, document_id in todo.uploads
            }
            for future in as_completed(sent):
                logical, digest, document_id = sent[future]
                try:
                    made = future.result()
                except NaturaliAPIError as exc:
                    if exc.status in (401, 403, 404):
                        raise
                    outcome.failed[logical] = (digest, exc.message)
                    outcome.events.append(("failed", logical))
                except OSError as exc:  # it changed under us since the plan read it
                    outcome.failed[logical] = (digest, f"it cannot be read: {exc.strerror}")
                    outcome.events.append(("failed", logical))
                else:
                    outcome.events.append(
                        ("created" if document_id is None else "updated", logical)
                    )
                    _noted(outcome, logical, made.warnings)
                    if made.status == "processing":
                        pending[made.id] = (logical, digest)
                progress.advance(files)
        for logical, document_id in todo.delete:
            try:
                api.documents.delete(project_id=project, document_id=document_id)
                outcome.events.append(("deleted", logical))
            except NaturaliAPIError as exc:
                outcome.failed[logical] = ("", exc.message)
            progress.advance(files)
        _follow(api, project, pending, outcome)
    return outcome


def _noted(outcome: Outcome, logical: str, warnings: list[str]) -> None:
    if warnings:
        outcome.warnings[logical] = list(warnings)


def _upload(api: Client, project: str, logical: str, file: Path, document_id: str | None) -> Any:
    if document_id is None:
        return api.documents.upload(project_id=project, file=file, path=logical)
    return api.documents.replace(project_id=project, document_id=document_id, file=file)


def _follow(api: Client, project: str, pending: dict[str, tuple[str, str]], out: Outcome) -> None:
    """Wait for the documents still processing; a failed one is a failure of its file."""
    while pending:
        for document_id, (logical, digest) in list(pending.items()):
            document = api.documents.get(project_id=project, document_id=document_id)
            if document.status == "processing":
                continue
            del pending[document_id]
            _noted(out, logical, document.warnings)
            if document.status == "failed":
                out.failed[logical] = (digest, str((document.error or {}).get("message")))
        if pending:
            time.sleep(POLL_SECONDS)

"""``naturali sync DIR``: mirror a folder into a project under a path prefix. New files are
uploaded, changed ones get a new version, unchanged ones cost nothing (their SHA-256 is
compared with the document's ``content_hash`` first, so no body is sent), and with
``--delete`` documents under the prefix whose file is gone are deleted. ``naturali ingest``
is the same without ``--delete``."""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from naturali.cli.common import BaseUrl, Token, client, errors
from naturali.client._errors import NaturaliAPIError
from naturali.contracts.formats import FORMATS

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from naturali.client import Client

SUFFIXES = {s for s in FORMATS if s}
POLL_SECONDS = 0.5  # how often the documents still processing are looked at
UPLOADS_IN_FLIGHT = 4


@dataclass
class Plan:
    create: list[tuple[str, Path]] = field(default_factory=list)
    update: list[tuple[str, Path, str]] = field(default_factory=list)  # path, file, document id
    delete: list[tuple[str, str]] = field(default_factory=list)  # path, document id
    unchanged: int = 0

    @property
    def uploads(self) -> list[tuple[str, Path, str | None]]:
        created: list[tuple[str, Path, str | None]] = [(p, f, None) for p, f in self.create]
        return created + [(p, f, d) for p, f, d in self.update]


def local_files(
    directory: Path, prefix: str, outside: bool = False
) -> tuple[dict[str, Path], list[str]]:
    """Every file naturali ingests under the directory, by its logical path, and the links
    left out because their real path is outside the directory (unless ``outside``); hidden
    files and folders (``.git``) are left out too."""
    found: dict[str, Path] = {}
    escaped: list[str] = []
    root = directory.resolve()
    for file in sorted(directory.rglob("*")):
        relative = file.relative_to(directory)
        hidden = any(part.startswith(".") for part in relative.parts)
        if not file.is_file() or file.suffix.lower() not in SUFFIXES or hidden:
            continue
        if not outside and not file.resolve().is_relative_to(root):
            escaped.append(relative.as_posix())  # a link to /etc/passwd is not the folder's
            continue
        found[prefix + relative.as_posix()] = file
    return found, escaped


def plan(files: dict[str, Path], documents: dict[str, tuple[str, str]], delete: bool) -> Plan:
    """What to do: ``documents`` maps a path under the prefix to (document id, content hash)."""
    out = Plan()
    for logical, file in files.items():
        known = documents.get(logical)
        if known is None:
            out.create.append((logical, file))
        elif hashlib.sha256(file.read_bytes()).hexdigest() == known[1]:
            out.unchanged += 1
        else:
            out.update.append((logical, file, known[0]))
    if delete:
        out.delete = [(p, d) for p, (d, _) in sorted(documents.items()) if p not in files]
    return out


def sync(
    directory: Annotated[Path, typer.Argument(exists=True, file_okay=False, readable=True)],
    project: Annotated[str, typer.Option("--project", help="Project id")],
    path: Annotated[str, typer.Option("--path", help="Logical path prefix, e.g. /handbook/")] = "/",
    delete: Annotated[
        bool, typer.Option("--delete", help="Delete documents under the prefix whose file is gone")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan, change nothing")] = (
        False
    ),
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
    follow_outside: Annotated[
        bool,
        typer.Option(
            "--follow-outside",
            help="Also upload files whose real path is outside DIRECTORY (symbolic links)",
        ),
    ] = False,
) -> None:
    """Mirror DIRECTORY into the project at PATH + each file's relative path: upload new
    files, new versions of changed ones, and with --delete remove what is gone. Exits 1
    unless every file made it."""
    prefix = path if path.endswith("/") else path + "/"
    with errors(), client(base_url, token) as api:
        documents = {
            d.path: (d.id, d.content_hash)
            for d in api.documents.list(project_id=project, path_prefix=prefix)
        }
        files, escaped = local_files(directory, prefix, follow_outside)
        for relative in escaped:
            typer.secho(
                f"{relative}: skipped, a link to a file outside {directory} "
                "(--follow-outside uploads it)",
                err=True,
                fg=typer.colors.YELLOW,
            )
        todo = plan(files, documents, delete)
        if dry_run:
            _print_plan(todo)
            return
        if not todo.uploads and not todo.delete:
            typer.echo(f"nothing to do: {todo.unchanged} files under {prefix} are unchanged")
            return
        failed = _apply(api, project, todo)
    done = len(todo.uploads) - len(failed)
    typer.echo(
        f"{len(todo.create)} new, {len(todo.update)} changed, {len(todo.delete)} deleted, "
        f"{todo.unchanged} unchanged under {prefix}; {done} of {len(todo.uploads)} uploads made it"
    )
    if failed:
        for logical, message in failed:
            typer.secho(f"{logical}: {message}", err=True, fg=typer.colors.YELLOW)
        raise typer.Exit(1)


def ingest(
    directory: Annotated[Path, typer.Argument(exists=True, file_okay=False, readable=True)],
    project: Annotated[str, typer.Option("--project", help="Project id")],
    path: Annotated[str, typer.Option("--path", help="Logical path prefix, e.g. /handbook/")] = "/",
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Upload every file naturali ingests under DIRECTORY at PATH + its relative path (naturali
    sync without --delete): new files, new versions of changed ones."""
    sync(directory, project, path, False, False, base_url, token, False)


def _print_plan(todo: Plan) -> None:
    for logical, _ in todo.create:
        typer.echo(f"create  {logical}")
    for logical, _, _ in todo.update:
        typer.echo(f"update  {logical}")
    for logical, _ in todo.delete:
        typer.echo(f"delete  {logical}")
    typer.echo(
        f"plan: {len(todo.create)} to create, {len(todo.update)} to update, "
        f"{len(todo.delete)} to delete, {todo.unchanged} unchanged (dry run: nothing changed)"
    )


def _apply(api: Client, project: str, todo: Plan) -> list[tuple[str, str]]:
    """Upload and delete, then follow the background jobs to the end, with a progress bar of
    files and of chunks embedded; the failures back."""
    # Imported here: rich's progress bar is loaded only by a sync that uploads.
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    failed: list[tuple[str, str]] = []
    columns = (
        TextColumn("{task.description:<9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        files = progress.add_task("files", total=len(todo.uploads) + len(todo.delete))
        chunks = progress.add_task("chunks", total=0)
        pending: dict[str, tuple[str, int]] = {}  # document id → (path, chunks total)
        # A few uploads in flight: a small file's one or two chunks leave the server's other
        # embedding stream idle, so one at a time would use half of a 2-core server.
        with ThreadPoolExecutor(UPLOADS_IN_FLIGHT) as uploads:
            sent = {
                uploads.submit(_upload, api, project, logical, file, document_id): logical
                for logical, file, document_id in todo.uploads
            }
            for future in as_completed(sent):
                try:
                    made = future.result()
                except NaturaliAPIError as exc:
                    if exc.status in (401, 403, 404):
                        raise
                    failed.append((sent[future], exc.message))
                else:
                    processing = made.status == "processing"
                    total = (made.chunks_total if processing else made.chunk_count) or 0
                    progress.update(chunks, total=(progress.tasks[chunks].total or 0) + total)
                    if processing:
                        pending[made.id] = (sent[future], total)
                    else:
                        progress.advance(chunks, made.chunk_count)
                progress.advance(files)
        for logical, document_id in todo.delete:
            try:
                api.documents.delete(project_id=project, document_id=document_id)
            except NaturaliAPIError as exc:
                failed.append((logical, exc.message))
            progress.advance(files)
        failed += _follow(api, project, pending, progress, chunks)
    return failed


def _upload(api: Client, project: str, logical: str, file: Path, document_id: str | None) -> Any:
    if document_id is None:
        return api.documents.upload(project_id=project, file=file, path=logical)
    return api.documents.replace(project_id=project, document_id=document_id, file=file)


def _follow(
    api: Client,
    project: str,
    pending: dict[str, tuple[str, int]],
    progress: Progress,
    chunks: TaskID,
) -> list[tuple[str, str]]:
    """Wait for the documents still processing, advancing the chunks bar as they embed."""
    failed: list[tuple[str, str]] = []
    done_before = progress.tasks[chunks].completed
    done: dict[str, int] = {}
    while pending:
        for document_id, (logical, total) in list(pending.items()):
            document = api.documents.get(project_id=project, document_id=document_id)
            if document.status == "processing":
                done[document_id] = document.chunks_done or 0
                continue
            del pending[document_id]
            done[document_id] = total
            if document.status == "failed":
                failed.append((logical, str((document.error or {}).get("message", "failed"))))
        progress.update(chunks, completed=done_before + sum(done.values()))
        if pending:
            time.sleep(POLL_SECONDS)
    return failed

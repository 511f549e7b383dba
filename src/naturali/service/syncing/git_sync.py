"""A Git source's sync: fetch the ref shallow, list the folder's files with their blob ids,
and read only the files whose blob changed since their document recorded it; documents whose
file went away are deleted. Nothing the source did not make is touched. A run that reaches
its deadline or its budget of files stops between two files, marked ``truncated``: the next
reads only what it did not write (their blobs are recorded)."""

from __future__ import annotations

from pathlib import PurePosixPath

from naturali.contracts.formats import FORMATS
from naturali.model import Source
from naturali.ports.storage import Storage
from naturali.service.corpus.documents import Documents, Upload
from naturali.service.syncing.source_runs import Fetching, Run, existing, listed, provenance, put
from naturali.service.syncing.sources import made_by
from naturali.sources import addresses, mirror
from naturali.sources.git import GitRepository, GitSourceError, TreeFile


def sync_git(
    source: Source, documents: Documents, storage: Storage, fetching: Fetching, run: Run
) -> None:
    try:
        target = addresses.check(source.url, fetching.allow)
        repo = GitRepository(
            fetching.directory / source.id, fetching.git_binary, fetching.ssh_command
        )
        run.commit = run.cursor = repo.fetch(target, source.ref, run.deadline)
        _mirror(source, repo, run, documents, storage, fetching)
    except (addresses.Refused, GitSourceError) as exc:
        run.error = str(exc)


def _mirror(
    source: Source,
    repo: GitRepository,
    run: Run,
    documents: Documents,
    storage: Storage,
    fetching: Fetching,
) -> None:
    assert run.commit is not None
    tree = repo.files(run.commit, source.folder)
    chosen = mirror.Selection.of(source.include, source.exclude, repo.ignored(run.commit))
    files: dict[str, TreeFile] = {}
    for file in tree:
        inside = mirror.logical("/", source.folder, file.path)[1:]
        if not chosen.takes(inside, file.path):
            continue
        why = _left_out(file, fetching.max_bytes)
        if why:
            listed(run.skipped, f"{file.path}: {why}")
            continue
        files[mirror.logical(source.path, source.folder, file.path)] = file
    before = made_by(storage, source)
    plan = mirror.plan({path: f.blob for path, f in files.items()}, before)
    run.unchanged = plan.unchanged
    for path in plan.create + plan.update:
        if run.files_read >= fetching.run_pages:
            run.truncated = f"the run's budget of {fetching.run_pages} files was reached"
        if run.truncated or run.out_of_time(fetching.run_seconds):
            return  # what is left, deletes included, is the next run's
        current = existing(storage, source, before, path)
        file = files[path]
        where = provenance(source, url=source.url, path=file.path, commit=run.commit, key=file.blob)
        upload = Upload(repo.read(file.blob), PurePosixPath(file.path).name, path, metadata=where)
        put(source, run, documents, upload, current)
    for document_id in plan.delete:
        storage.delete_document(source.project_id, document_id)
        run.deleted += 1


def _left_out(file: TreeFile, max_bytes: int) -> str | None:
    """Why a repository file is not mirrored: a type naturali does not read (a binary), or
    larger than an upload may be."""
    if PurePosixPath(file.path).suffix.lower() not in FORMATS:
        return "not a type naturali reads (binary?)"
    if file.size > max_bytes:
        return f"{file.size} bytes, over the {max_bytes}-byte upload limit"
    return None

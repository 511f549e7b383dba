"""A source's sync, run by whichever server's SourceWorker holds it: fetch the repository at
its ref (shallow), list its files, and make the documents under the source's prefix mirror
them — only the files whose blob changed since the last sync are read, parsed and embedded;
files that went away are deleted; nothing the source did not make is touched. Each document
says where it came from in ``metadata.source`` (the source, URL, path, commit), so a hit can
link to it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from naturali.contracts.formats import FORMATS
from naturali.contracts.resources import SourceRun
from naturali.errors import NaturaliError
from naturali.ids import new_id
from naturali.model import Source, utcnow
from naturali.ports.storage import Storage
from naturali.service.documents import Documents, Upload
from naturali.service.sources import made_by
from naturali.sources import addresses, mirror
from naturali.sources.git import GitRepository, GitSourceError, TreeFile

log = logging.getLogger("naturali.sources")
POLL_SECONDS = 15.0  # how often an idle worker looks for a due sync
MAX_LISTED = 20  # files named in a run's skipped and failed lists


@dataclass
class Run:
    """What a sync did, as ``last_run`` says it."""

    commit: str | None = None
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    files_read: int = 0
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    def record(self) -> SourceRun:
        return SourceRun(**self.__dict__, at=utcnow())


@dataclass(frozen=True)
class Fetching:
    """What a sync needs of its server: where repositories are kept, the git to run them
    with, the network rules, and the largest file a document may be."""

    directory: Path
    allow: addresses.Allowlist
    max_bytes: int
    git_binary: str = "git"
    ssh_command: str | None = None


def sync(source: Source, documents: Documents, storage: Storage, fetching: Fetching) -> Run:
    run = Run()
    try:
        target = addresses.check(source.url, fetching.allow)
        repo = GitRepository(
            fetching.directory / source.id, fetching.git_binary, fetching.ssh_command
        )
        run.commit = repo.fetch(target, source.ref)
        _mirror(source, repo, run, documents, storage, fetching.max_bytes)
    except (addresses.Refused, GitSourceError) as exc:
        run.error = str(exc)
    return run


def _mirror(
    source: Source,
    repo: GitRepository,
    run: Run,
    documents: Documents,
    storage: Storage,
    max_bytes: int,
) -> None:
    assert run.commit is not None
    tree = repo.files(run.commit, source.folder)
    chosen = mirror.Selection.of(source.include, source.exclude, repo.ignored(run.commit))
    files: dict[str, TreeFile] = {}
    for file in tree:
        inside = mirror.logical("/", source.folder, file.path)[1:]
        if not chosen.takes(inside, file.path):
            continue
        why = _left_out(file, max_bytes)
        if why:
            _listed(run.skipped, f"{file.path}: {why}")
            continue
        files[mirror.logical(source.path, source.folder, file.path)] = file
    before = made_by(storage, source)
    plan = mirror.plan({path: f.blob for path, f in files.items()}, before)
    run.unchanged = plan.unchanged
    for path in plan.create + plan.update:
        current = (
            storage.get_document(source.project_id, before[path][0]) if path in before else None
        )
        _put(source, repo, run, documents, path, files[path], current)
    for document_id in plan.delete:
        storage.delete_document(source.project_id, document_id)
        run.deleted += 1


def _put(
    source: Source,
    repo: GitRepository,
    run: Run,
    documents: Documents,
    path: str,
    file: TreeFile,
    current: Any,
) -> None:
    provenance = {
        "id": source.id,
        "url": source.url,
        "path": file.path,
        "commit": run.commit,
        "key": file.blob,
    }
    upload = Upload(
        repo.read(file.blob),
        PurePosixPath(file.path).name,
        path,
        metadata={"source": provenance},
    )
    run.files_read += 1
    try:
        documents.mirror(source.project_id, current, upload)
    except NaturaliError as exc:
        if len(run.failed) < MAX_LISTED:
            run.failed[path] = exc.message
        return
    if current is None:
        run.created += 1
    else:
        run.updated += 1


def _left_out(file: TreeFile, max_bytes: int) -> str | None:
    """Why a repository file is not mirrored: a type naturali does not read (a binary), or
    larger than an upload may be."""
    if PurePosixPath(file.path).suffix.lower() not in FORMATS:
        return "not a type naturali reads (binary?)"
    if file.size > max_bytes:
        return f"{file.size} bytes, over the {max_bytes}-byte upload limit"
    return None


def _listed(items: list[str], item: str) -> None:
    if len(items) < MAX_LISTED:
        items.append(item)


class SourceWorker:
    """One thread a server: takes a due sync on a lease, runs it, records it."""

    def __init__(
        self,
        storage: Storage,
        documents: Callable[[], Documents],
        fetching: Fetching,
        lease_seconds: float = 120.0,
    ) -> None:
        self._storage = storage
        self._documents = documents
        self._fetching = fetching
        self._lease = lease_seconds
        self.owner = new_id("worker")
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._woken = False

    def start(self) -> None:
        with self._wake:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._work, name="naturali-sources", daemon=True
                )
                self._thread.start()

    def wake(self) -> None:
        self.start()
        with self._wake:
            self._woken = True
            self._wake.notify_all()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)

    def run_once(self) -> bool:
        """Take one due sync and run it; False when none is due (tests call it)."""
        source = self._storage.claim_source(self.owner, self._lease, time.time())
        if source is None:
            return False
        run = sync(source, self._documents(), self._storage, self._fetching)
        if run.error:
            log.warning("source %s did not sync: %s", source.id, run.error)
        every = source.every_seconds
        next_run = time.time() + every if every else None
        record = run.record().model_dump()
        self._storage.finish_source(source.id, self.owner, record, run.commit, next_run)
        return True

    def _work(self) -> None:
        while not self._closed:
            try:
                if self.run_once():
                    continue
            except Exception:  # the catalog unreachable for a moment: try again later
                log.exception("a source sync failed")
            with self._wake:
                if not self._woken and not self._closed:
                    self._wake.wait(POLL_SECONDS)
                self._woken = False

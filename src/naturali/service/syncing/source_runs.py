"""What every source's sync shares: the record of a run, what a server lends a sync (where
repositories are kept, the network rules, the upload bound), and how a fetched file becomes
a version of its document — written as the source (service/corpus/documents.py ``mirror``), with its
provenance in ``metadata.source``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from naturali.contracts.resources import SourceRun
from naturali.errors import NaturaliError
from naturali.model import Document, Source, utcnow
from naturali.ports.storage import Storage
from naturali.service.corpus.documents import Documents, Upload
from naturali.sources import addresses

MAX_LISTED = 20  # files named in a run's skipped and failed lists


@dataclass
class Run:
    """What a sync did, as ``last_run`` says it, and what it may still spend."""

    commit: str | None = None
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    files_read: int = 0
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    truncated: str | None = None  # why the run stopped before the end (it resumes next time)
    cursor: str | None = None  # where the next sync starts from: a commit, a crawl's state
    deadline: float = float("inf")  # time.monotonic() the run may not outlast
    # Whether the server still holds the sync's lease (its heartbeat renews it meanwhile).
    holding: Callable[[], bool] = lambda: True

    def beat(self) -> None:
        """Between two files or pages: a sync whose lease another server took stops here, so
        no two write the same documents."""
        if not self.holding():
            raise LeaseLost("another server took this sync over")

    def out_of_time(self, run_seconds: float) -> bool:
        """Whether the run's deadline passed (then it is marked truncated, to go on next)."""
        if time.monotonic() < self.deadline:
            return False
        self.truncated = f"the run's deadline ({run_seconds:g} s) passed"
        return True

    def record(self) -> SourceRun:
        return SourceRun(
            **{k: getattr(self, k) for k in SourceRun.model_fields if k != "at"}, at=utcnow()
        )


class LeaseLost(Exception):
    """The server no longer holds the sync it was running."""


@dataclass(frozen=True)
class Fetching:
    """What a sync needs of its server: where repositories are kept, the git to run them
    with, the network rules, the largest file a document may be, and what one run may take
    (a page's whole fetch, the run's time and pages)."""

    directory: Path
    allow: addresses.Allowlist
    max_bytes: int
    git_binary: str = "git"
    ssh_command: str | None = None
    page_seconds: float = 60.0
    run_seconds: float = 600.0
    run_pages: int = 2000


def put(
    source: Source,
    run: Run,
    documents: Documents,
    upload: Upload,
    current: Document | None,
) -> None:
    """Write a fetched file as a version of its document (a new one when ``current`` is
    None); a refusal (its type, a limit) is listed in the run, never raised."""
    run.beat()
    run.files_read += 1
    try:
        documents.mirror(source.project_id, current, upload)
    except NaturaliError as exc:
        if len(run.failed) < MAX_LISTED:
            run.failed[upload.path or ""] = exc.message
        return
    if current is None:
        run.created += 1
    else:
        run.updated += 1


def existing(
    storage: Storage, source: Source, before: dict[str, tuple[str, str]], path: str
) -> Document | None:
    """The document the source made at ``path`` before (``made_by``), if any."""
    return storage.get_document(source.project_id, before[path][0]) if path in before else None


def provenance(source: Source, **where: Any) -> dict[str, Any]:
    """``metadata.source`` of a document the source made: the source, and where in it."""
    return {"source": {"id": source.id, **where}}


def listed(items: list[str], item: str) -> None:
    if len(items) < MAX_LISTED:
        items.append(item)

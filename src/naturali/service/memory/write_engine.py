"""The write engine under every knowledge-record write: journal, atomic files, receipt,
history and guards, then the vault's Git commit.

Order of a write, under the store's write lock (threads and processes): journal the intent in
state.sqlite → write each file atomically → record the receipt, history and guards → commit to
the vault's own Git repository. A failed Git step leaves ``git.state: "pending"`` and never
rolls the write back; the next write or ``resume`` retries it. An interrupted write is rolled
forward from the journal by the next write or ``resume``; files are never torn (temp file,
fsync, rename). What to write is planned elsewhere (``service/memory/mutations.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from naturali.contracts.records import GitState, Receipt, ReceiptRecord, Revision
from naturali.errors import Conflict
from naturali.model import utcnow
from naturali.ports.state import GuardRow, JournalEntry, PlannedWrite
from naturali.retrieval.records.keyword import Filters
from naturali.service.memory.stores import OpenStore, StoreView
from naturali.vault.files import atomic_write, remove_temp_files
from naturali.vault.git import GitError, VaultGit

Plan = tuple[list[PlannedWrite], list[GuardRow]]
"""The files a write puts in place and the guards it records."""


class WriteEngine:
    """Carries out planned writes durably; idempotent per ``requestId``."""

    def __init__(self, git_binary: str = "git", git_enabled: bool = True) -> None:
        self._git_binary = git_binary
        self._git_enabled = git_enabled

    def write(
        self,
        opened: OpenStore,
        request_id: str,
        operation: str,
        request: BaseModel,
        plan: Callable[[StoreView], Plan],
        warnings: Sequence[str] = (),
    ) -> tuple[Receipt, tuple[PlannedWrite, ...]]:
        """Plan against the current view and write: the receipt (with ``warnings``) and the
        writes made. Or the receipt of the earlier write with this ``request_id`` (the same
        arguments only), and no writes."""
        args_hash = hashlib.sha256(
            json.dumps(request.model_dump(), sort_keys=True, default=str).encode()
        ).hexdigest()
        with opened.state.write_lock():
            self._recover(opened)
            existing = opened.state.journal_get(request_id)
            if existing is not None:
                if existing.args_hash != args_hash or existing.operation != operation:
                    raise Conflict(
                        f"requestId {request_id!r} was used with other arguments",
                        code="request_id_reused",
                        param="requestId",
                    )
                assert existing.receipt is not None
                return self._with_indexed(opened, existing.receipt), ()
            writes, guards = plan(opened.view())
            entry = JournalEntry(
                request_id,
                operation,
                args_hash,
                tuple(writes),
                tuple(guards),
                "journaled",
                None,
                utcnow(),
            )
            opened.state.journal_begin(entry)
            opened.note_write()
            receipt = self._apply(opened, entry, warnings)
            git = self._commit(opened, [request_id])
        return self._with_indexed(opened, receipt.model_copy(update={"git": git})), entry.writes

    def _apply(
        self, opened: OpenStore, entry: JournalEntry, warnings: Sequence[str] = ()
    ) -> Receipt:
        """Put the entry's files in place and record its receipt (Git's step still ahead)."""
        vault = opened.store_dir / "vault"
        written = [w.content.encode("utf-8") for w in entry.writes]
        for write, data in zip(entry.writes, written, strict=True):
            atomic_write(vault / write.path, data)
        opened.scanner.learn(written)
        receipt = Receipt(
            request_id=entry.request_id,
            operation=entry.operation,
            at=utcnow(),
            records=[
                ReceiptRecord(
                    id=w.record_id,
                    revision=w.revision,
                    path=w.path,
                    sha256=w.sha256,
                    lifecycle=w.lifecycle,
                )
                for w in entry.writes
            ],
            git=GitState(state="pending", commit=None),
            indexed=False,  # answered when read (_with_indexed), never journaled
            warnings=list(warnings),
        )
        opened.state.journal_record(
            entry.request_id, receipt.model_dump(exclude={"indexed"}, exclude_unset=True)
        )
        return receipt

    def resume(self, opened: OpenStore) -> tuple[list[str], list[str]]:
        """Finish interrupted writes and retry pending commits: (completed, still pending)."""
        with opened.state.write_lock():
            finished = self._recover(opened)
            return finished, opened.state.journal_git_pending()

    def _commit(self, opened: OpenStore, request_ids: list[str]) -> GitState:
        """Commit the record files these mutations and any earlier pending ones wrote, and
        nothing else (no temp file, no file edited by other means), in one commit: the Git
        state recorded on each of their receipts."""
        earlier = [r for r in opened.state.journal_git_pending() if r not in request_ids]
        pending = earlier + request_ids
        paths = sorted(
            {w.path for r in pending if (e := opened.state.journal_get(r)) for w in e.writes}
        )
        if not self._git_enabled:
            return _set_git(opened, pending, GitState(state="disabled", commit=None))
        git = VaultGit(opened.store_dir / "vault", self._git_binary)
        try:
            commit = (
                git.commit(
                    f"naturali: {', '.join(pending[:5])}" + (" …" if len(pending) > 5 else ""),
                    paths,
                )
                or git.head()
            )
        except GitError as exc:
            failed = GitState(state="pending", commit=None, error=str(exc)[:300])
            return _set_git(opened, pending, failed)
        return _set_git(opened, pending, GitState(state="committed", commit=commit))

    def _recover(self, opened: OpenStore) -> list[str]:
        """Roll forward writes a crash interrupted (the journal holds their full content),
        then retry pending Git commits."""
        finished = []
        incomplete = opened.state.journal_incomplete()
        # The store lock is held, so no live writer owns a temp file: any is a killed one's.
        remove_temp_files(opened.store_dir / "vault")
        for entry in incomplete:
            self._apply(opened, entry)
            finished.append(entry.request_id)
        if finished or opened.state.journal_git_pending():
            self._commit(opened, finished)
        return finished

    def receipt(self, opened: OpenStore, request_id: str) -> Receipt | None:
        """The receipt of the write sent with ``request_id``, if it was recorded."""
        entry = opened.state.journal_get(request_id)
        if entry is None or entry.receipt is None:
            return None
        return self._with_indexed(opened, entry.receipt)

    def history(self, opened: OpenStore, record_id: str) -> list[Revision]:
        """A record's revisions, oldest first, each with its write's receipt."""
        revisions = []
        for row in opened.state.history(record_id):
            receipt = row["receipt"]
            indexed = self._with_indexed(opened, receipt) if receipt is not None else None
            revisions.append(Revision.model_validate({**row, "receipt": indexed}))
        return revisions

    def _with_indexed(self, opened: OpenStore, receipt: Receipt | dict[str, Any]) -> Receipt:
        """A receipt (or a journaled one) as the caller sees it: ``indexed`` is false until a
        search has projected this mutation's files."""
        if not isinstance(receipt, Receipt):
            receipt = Receipt.model_validate({**receipt, "indexed": False})
        version = opened.state.projection_version(Filters().scope(), "searched")
        indexed = version is not None and version[1] >= receipt.at
        return receipt.model_copy(update={"indexed": indexed})


def _set_git(opened: OpenStore, request_ids: list[str], git: GitState) -> GitState:
    opened.state.journal_set_git(request_ids, git.model_dump(exclude_unset=True))
    return git

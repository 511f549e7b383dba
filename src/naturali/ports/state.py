"""The port for a memory store's ``state.sqlite``: keyword projections (rebuildable) and the
safeguards, which are not (withdrawal and supersession guards)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

ProjectionTable = Literal["searched", "history"]
MatchMode = Literal["all", "any", "phrase"]
"""Every token must match, any may, or all in order."""


@dataclass(frozen=True)
class ProjectionRow:
    record_id: str
    content_hash: str
    title: str
    aliases: str
    body: str


@dataclass(frozen=True)
class GuardRow:
    record_id: str
    revision: int
    lifecycle: str  # withdrawn | superseded
    superseded_by: str | None
    reason: str
    at: str


@dataclass(frozen=True)
class SessionRow:
    """One process that opened the store (session activity): who, since when, how many
    writes."""

    session_id: str
    pid: int
    host: str
    started_at: str
    last_active_at: str = ""
    writes: int = 0


@dataclass(frozen=True)
class TemporalRow:
    """A record's structured dates and entity associations, as projected for date queries."""

    record_id: str
    content_hash: str
    dates: tuple[tuple[str, int, int, bool], ...]  # field, start_us, end_us, date_only
    entities: tuple[tuple[str, str], ...]  # entity id, via


@dataclass(frozen=True)
class PlannedWrite:
    """One file a mutation writes: its vault-relative path and full new content."""

    path: str
    content: str
    record_id: str
    revision: int
    lifecycle: str
    sha256: str


@dataclass(frozen=True)
class JournalEntry:
    request_id: str
    operation: str
    args_hash: str
    writes: tuple[PlannedWrite, ...]
    guards: tuple[GuardRow, ...]
    state: str  # journaled | recorded
    receipt: dict[str, Any] | None
    created_at: str


class StateStore(Protocol):
    """Keyword projections and guards (below) plus the temporal projections (TemporalStore)."""

    def write_lock(self) -> AbstractContextManager[None]:
        """Held around a write: one writer per store across threads, processes and hosts."""
        ...

    def claim_identity(self, store_id: str) -> str:
        """Record ``store_id`` as this state's store unless one is recorded; return it."""
        ...

    def record_session(self, session: SessionRow, *, writes: int) -> None:
        """Upsert this process's session row: last activity now, ``writes`` more writes."""
        ...

    def sessions(self) -> list[SessionRow]:
        """Every process that wrote to the store, with its last activity and writes."""
        ...

    def guards_version(self) -> int:
        """A counter that moves whenever a guard is added."""
        ...

    def guards(self) -> list[GuardRow]:
        """The withdrawal and supersession guards, which outrank any file."""
        ...

    def add_guards(self, guards: list[GuardRow]) -> None:
        """Guards for lifecycles edited outside the service (never lowers a guard)."""
        ...

    def known_fronts(self, digests: Collection[str]) -> dict[str, Any]:
        """Parsed front matters held among ``digests`` (vault/fronts.py: rebuildable)."""
        ...

    def keep_fronts(self, fronts: Mapping[str, Any], live: Collection[str] | None) -> None:
        """Hold ``fronts`` (digest → parsed); with ``live``, forget every other."""
        ...

    def catalogue_match(self) -> str | None:
        """The stamp kept when the catalogue last matched the store in full
        (service/memory/stores.py: ``OpenStore.keep_match``; rebuildable: none costs one full
        reconcile)."""
        ...

    def keep_catalogue_match(self, stamp: str) -> None:
        """Keep ``stamp`` (written only when it differs from the one held)."""
        ...

    def projection_version(self, scope: str, table: ProjectionTable) -> tuple[int, str] | None:
        """(change counter, indexed_at) of a scope's projection, None when it is missing."""
        ...

    def reconcile(
        self,
        scope: str,
        table: ProjectionTable,
        wanted: Mapping[str, str],
        load: Callable[[str], ProjectionRow],
    ) -> tuple[int, str, int]:
        """Make the projection hold exactly the records of ``wanted`` (id → content hash):
        only changed hashes are re-indexed (``load`` gives their text); a missing table or one
        built another way (the adapter's tokenizer and weights) is rebuilt. Returns (counter,
        indexed_at, rows re-indexed)."""
        ...

    def match(
        self, scope: str, table: ProjectionTable, tokens: list[str], mode: MatchMode
    ) -> list[tuple[str, float]]:
        """Record ids whose title, aliases or body match the word ``tokens`` in ``mode``,
        with their BM25 score (higher is better), best first, then by id."""
        ...

    def reconcile_temporal(
        self, wanted: Mapping[str, str], load: Callable[[str], TemporalRow], fingerprint: str
    ) -> tuple[int, str]:
        """Make the temporal projection hold exactly ``wanted`` (id → content hash); returns
        (counter, indexed_at)."""
        ...

    def temporal_range(
        self, field: str, start: int | None, end: int | None, entity: str | None
    ) -> list[tuple[str, int, int]]:
        """(record id, start, end) of dates in ``field`` overlapping [start, end), of ``entity``
        when given."""
        ...

    def entity_records(self, entity: str) -> dict[str, str]:
        """The records linked to an entity, with how (id → via)."""
        ...

    # the write side: journal, receipts, history
    def journal_get(self, request_id: str) -> JournalEntry | None:
        """The journal entry of a write by its requestId, or None."""
        ...

    def journal_begin(self, entry: JournalEntry) -> None:
        """Journal a planned write before any file is touched."""
        ...

    def journal_record(self, request_id: str, receipt: dict[str, Any]) -> None:
        """Mark recorded with its receipt, add history rows and the entry's guards, at once."""
        ...

    def journal_incomplete(self) -> list[JournalEntry]:
        """Writes journaled but not recorded (a crash interrupted them)."""
        ...

    def journal_set_git(self, request_ids: list[str], git: dict[str, Any]) -> None:
        """Set the Git state of these writes' receipts."""
        ...

    def journal_git_pending(self) -> list[str]:
        """Writes whose Git commit is still pending."""
        ...

    def history(self, record_id: str) -> list[dict[str, Any]]:
        """A record's revisions, oldest first, with their receipts."""
        ...

    def revisions_at(self, instant: str) -> list[PlannedWrite]:
        """Each record's revision that was current at ``instant`` (a ``utcnow()``-form UTC
        timestamp): its last recorded write at or before then, content included (from the
        journal), by record id."""
        ...

    def idle(self) -> None:
        """No caller uses the state now: close the connections but the calling thread's."""
        ...

    def close(self) -> None:
        """Close the state's connections."""
        ...


StateFactory = Callable[[Path], StateStore]
"""Opens the state of the store whose directory is given."""


class ProjectionUnavailable(Exception):
    """A projection (keyword, temporal, a parsed front matter, the catalogue's match stamp)
    could not be read or written: a failed retrieval (retry), or a cache not kept."""

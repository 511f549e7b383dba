"""The port for a memory store's ``state.sqlite``: keyword projections (rebuildable) and the
safeguards, which are not (withdrawal and supersession guards)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

Table = Literal["searched", "history"]


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
class TemporalRow:
    """A record's structured dates and entity associations, as projected for date queries."""

    record_id: str
    content_hash: str
    dates: tuple[tuple[str, int, int, bool], ...]  # field, start_us, end_us, date_only
    entities: tuple[tuple[str, str], ...]  # entity id, via


class StateStore(Protocol):
    """Keyword projections and guards (below) plus the temporal projections (TemporalStore)."""

    def guards_version(self) -> int: ...
    def guards(self) -> list[GuardRow]: ...
    def add_guard(self, guard: GuardRow) -> None: ...

    def projection_version(self, scope: str, table: Table) -> tuple[int, str] | None:
        """(change counter, indexed_at) of a scope's projection, None when it is missing."""
        ...

    def reconcile(
        self,
        scope: str,
        table: Table,
        wanted: Mapping[str, str],
        load: Callable[[str], ProjectionRow],
        fingerprint: str,
    ) -> tuple[int, str, int]:
        """Make the projection hold exactly the records of ``wanted`` (id → content hash):
        only changed hashes are re-indexed (``load`` gives their text); a missing table or
        another fingerprint is rebuilt. Returns (counter, indexed_at, rows re-indexed)."""
        ...

    def match(self, scope: str, table: Table, expression: str) -> list[tuple[str, float]]:
        """Record ids matching an FTS5 expression with their BM25 score (higher is better),
        best first, then by id."""
        ...

    def reconcile_temporal(
        self, wanted: Mapping[str, str], load: Callable[[str], TemporalRow], fingerprint: str
    ) -> tuple[int, str]: ...

    def temporal_range(
        self, field: str, start: int | None, end: int | None, entity: str | None
    ) -> list[tuple[str, int, int]]: ...

    def entity_records(self, entity: str) -> dict[str, str]: ...

    def close(self) -> None: ...


class ProjectionUnavailable(Exception):
    """The keyword projection could not be read or written (a failed retrieval: retry)."""

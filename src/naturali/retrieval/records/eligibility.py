"""Which scanned records a query may see, in every mode.

Excluded: withdrawn records (by file or by a withdrawal guard that outranks a stale file) and
records whose declared dependencies, relationship endpoints or entities are unavailable —
transitively, since an excluded record makes its dependants unavailable too. Supersession
guards turn a stale "active" file of a superseded record back into a superseded one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from naturali.vault.ontology import Ontology
from naturali.vault.scan import Scan, ScannedRecord


@dataclass(frozen=True)
class Guard:
    revision: int
    lifecycle: str  # "withdrawn" or "superseded"
    superseded_by: str | None = None


@dataclass(frozen=True)
class AvailableRecord:
    """A record as queries see it (guards applied, type resolved)."""

    id: str
    scanned: ScannedRecord
    lifecycle: str
    superseded_by: str | None
    kind: str
    type: str

    @property
    def front(self) -> dict[str, Any]:
        return self.scanned.record.front

    @property
    def title(self) -> str:
        return self.scanned.record.title

    @property
    def aliases(self) -> list[str]:
        return [str(a) for a in self.front.get("aliases") or [] if isinstance(a, str | int)]

    @property
    def tags(self) -> list[str]:
        return self.scanned.record.tags


@dataclass(frozen=True)
class Exclusion:
    """A record left out because a reference it declares names no available record: said in
    ``coverage`` and by ``knowledge_record``, never silent."""

    id: str
    path: str
    reason: str


def eligible(
    scan: Scan,
    guards: dict[str, Guard],
    ontology: Ontology,
    reuse: dict[tuple[str, str], AvailableRecord] | None = None,
) -> tuple[dict[str, AvailableRecord], dict[str, Exclusion]]:
    """The available records, and those excluded for their references (by id).

    ``reuse`` maps a file and its content (``ScannedRecord.key``) to the record made from
    it under the same guards and ontology, so a scan where one file changed rebuilds one
    record, not all of them."""
    entries: dict[str, AvailableRecord] = {}
    for record_id, scanned in scan.records.items():
        entry = reuse.get(scanned.key) if reuse is not None else None
        if entry is None:
            entry = _entry(scanned, guards.get(record_id), ontology)
            if reuse is not None and entry is not None:
                reuse[scanned.key] = entry
        if entry is not None:
            entries[record_id] = entry
    # Drop records whose references are unavailable, until nothing changes; only records
    # that declare references need checking.
    referring = {i: e.scanned.references for i, e in entries.items() if e.scanned.references}
    excluded: dict[str, Exclusion] = {}
    changed = True
    while changed:
        changed = False
        for record_id, refs in list(referring.items()):
            if not refs <= entries.keys():
                scanned = entries.pop(record_id).scanned
                reason = _unavailable_reference(scanned, entries, excluded, scan)
                excluded[record_id] = Exclusion(record_id, scanned.path, reason)
                del referring[record_id]
                changed = True
    return entries, excluded


REFERENCE_FIELDS = ("dependencies", "entities", "owner", "from", "to")
"""The front-matter fields that name other records of the store by id."""


def declared_references(front: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, id) for each record a front matter names, in field order; ``owner`` is among
    them for writes (a save naming no record is refused) but does not exclude a record."""
    out: list[tuple[str, str]] = []
    for key in REFERENCE_FIELDS:
        value = front.get(key)
        values = value if isinstance(value, list) else [] if value is None else [value]
        out += [(key, str(v)) for v in values]
    return out


def _unavailable_reference(
    scanned: ScannedRecord,
    entries: dict[str, AvailableRecord],
    excluded: dict[str, Exclusion],
    scan: Scan,
) -> str:
    """Which reference made a record unavailable, and why that one is."""
    for key, ref in declared_references(scanned.record.front):
        if ref in entries or ref not in scanned.references:
            continue
        if ref in excluded:
            why = "is itself excluded"
        elif ref in scan.duplicates:
            why = "more than one file claims"
        elif ref in scan.records:
            why = "is withdrawn"
        else:
            why = "is no record of this store"
        return f"{key} names {ref!r}, which {why}"
    return "a declared reference is unavailable"


def _entry(
    scanned: ScannedRecord, guard: Guard | None, ontology: Ontology
) -> AvailableRecord | None:
    """A guard outranks every file that claims its id, whatever revision the file says: the
    service never reactivates a withdrawn or superseded record, so a file that does is a stale
    copy (or an edit that would undo the guard). Withdrawal outranks supersession."""
    record = scanned.record
    lifecycle = record.lifecycle
    superseded_by = record.front.get("superseded_by")
    if guard is not None and lifecycle != "withdrawn":
        lifecycle = guard.lifecycle
        superseded_by = guard.superseded_by or superseded_by
    if lifecycle == "withdrawn":
        return None
    return AvailableRecord(
        scanned.id,
        scanned,
        lifecycle,
        str(superseded_by) if superseded_by else None,
        str(record.front.get("kind")),
        ontology.resolve(str(record.front.get("type") or "")),
    )


def current_of(
    entry: AvailableRecord, entries: dict[str, AvailableRecord]
) -> AvailableRecord | None:
    """Follow ``superseded_by`` through eligible superseded records to the active record;
    None when the chain reaches a missing, withdrawn or ineligible record, or loops."""
    seen = {entry.id}
    node = entry
    while node.lifecycle == "superseded":
        if node.superseded_by is None or node.superseded_by in seen:
            return None
        nxt = entries.get(node.superseded_by)
        if nxt is None:
            return None
        seen.add(nxt.id)
        node = nxt
    return node if node.lifecycle == "active" else None

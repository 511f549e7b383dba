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
class Entry:
    """A record as queries see it (guards applied, type resolved)."""

    scanned: ScannedRecord
    lifecycle: str
    superseded_by: str | None
    kind: str
    type: str

    @property
    def id(self) -> str:
        return self.scanned.id

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


def _references(front: dict[str, Any]) -> set[str]:
    refs: set[str] = set()
    for key in ("dependencies", "entities"):
        value = front.get(key)
        if isinstance(value, list):
            refs |= {str(v) for v in value}
    for key in ("from", "to"):
        if front.get(key) is not None:
            refs.add(str(front[key]))
    return refs


def eligible(scan: Scan, guards: dict[str, Guard], ontology: Ontology) -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for record_id, scanned in scan.records.items():
        record = scanned.record
        lifecycle = record.lifecycle
        superseded_by = record.front.get("superseded_by")
        guard = guards.get(record_id)
        if guard is not None and record.revision <= guard.revision:
            lifecycle = guard.lifecycle
            superseded_by = guard.superseded_by or superseded_by
        if lifecycle == "withdrawn":
            continue
        entries[record_id] = Entry(
            scanned,
            lifecycle,
            str(superseded_by) if superseded_by else None,
            str(record.front.get("kind")),
            ontology.resolve(str(record.front.get("type") or "")),
        )
    changed = True
    while changed:  # drop records whose references are unavailable, until nothing changes
        changed = False
        for record_id in list(entries):
            if not _references(entries[record_id].front) <= entries.keys():
                del entries[record_id]
                changed = True
    return entries


def current_of(entry: Entry, entries: dict[str, Entry]) -> Entry | None:
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

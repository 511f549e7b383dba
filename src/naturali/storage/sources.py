"""The sources' statements, one text for both backends (``p``: ``?`` or ``%s``): a sync is
due when asked for (``requested_at``) or when its schedule says (``next_run_at``), and is
held by one server on a lease (one sync of a project at a time) — a server that dies leaves
it due, taken again when the lease runs out; finishing it records the run and releases it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceStatements:
    get: str
    list: str
    update: str
    delete: str
    request: str
    due: str
    claim: str
    renew: str
    finish: str


def statements(p: str, lock: str = "") -> SourceStatements:
    """``lock``: PostgreSQL's ``FOR UPDATE SKIP LOCKED`` (SQLite's write lock serialises)."""
    return SourceStatements(
        get=f"SELECT * FROM sources WHERE project_id = {p} AND id = {p}",
        list=f"SELECT * FROM sources WHERE project_id = {p} ORDER BY created_at, id",
        update=f"UPDATE sources SET spec = {p}, updated_at = {p}, next_run_at = {p} "
        f"WHERE project_id = {p} AND id = {p}",
        delete=f"DELETE FROM sources WHERE project_id = {p} AND id = {p}",
        request=f"UPDATE sources SET requested_at = {p} WHERE project_id = {p} AND id = {p}",
        # One sync of a project at a time, on every server: a slow or endless source holds
        # up its own project's next sync, never another's.
        due="SELECT * FROM sources s WHERE (requested_at IS NOT NULL OR next_run_at <= "
        f"{p}) AND (owner IS NULL OR lease_until < {p}) AND NOT EXISTS (SELECT 1 FROM "
        f"sources h WHERE h.project_id = s.project_id AND h.owner IS NOT NULL AND "
        f"h.lease_until >= {p}) ORDER BY coalesce(requested_at, next_run_at) LIMIT 1 {lock}",
        claim=f"UPDATE sources SET owner = {p}, lease_until = {p} WHERE id = {p}",
        renew=f"UPDATE sources SET lease_until = {p} WHERE id = {p} AND owner = {p}",
        # A request made before the run began is answered by it; one made since stays.
        finish=f"UPDATE sources SET owner = NULL, lease_until = NULL, last_run = {p}, "
        f"cursor = {p}, next_run_at = {p}, requested_at = CASE WHEN requested_at <= {p} "
        f"THEN NULL ELSE requested_at END WHERE id = {p} AND owner = {p}",
    )

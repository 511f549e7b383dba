"""What the service asks of a catalog about sources and their syncs (storage/sources.py)."""

from __future__ import annotations

from typing import Any, Protocol

from naturali.model import Source


class SourceStorage(Protocol):
    """Sources and their syncs: a sync is due when asked for or when its schedule says, and
    one server at a time holds it on a lease (taken again if that server dies)."""

    def create_source(self, source: Source) -> None: ...

    def get_source(self, project_id: str, source_id: str) -> Source | None: ...

    def list_sources(self, project_id: str) -> list[Source]: ...

    def update_source(self, source: Source) -> None:
        """Its settings (not its run's state)."""
        ...

    def delete_source(self, project_id: str, source_id: str) -> None: ...

    def request_source_sync(self, project_id: str, source_id: str, at: float) -> None: ...

    def claim_source(self, owner: str, lease_seconds: float, now: float) -> Source | None:
        """A due source no live lease holds, now held by ``owner`` (a request stays until
        the run ends, so a sync whose server died is taken again)."""
        ...

    def renew_source(self, source_id: str, owner: str, lease_seconds: float) -> bool: ...

    def finish_source(
        self,
        source_id: str,
        owner: str,
        last_run: dict[str, Any],
        cursor: str | None,
        next_run_at: float | None,
        started: float,
    ) -> bool:
        """Record the run, clear the requests made before it ``started``, release the
        lease; False if ``owner`` no longer held it."""
        ...

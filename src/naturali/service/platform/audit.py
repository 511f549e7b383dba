"""The audit trail: every write through the API appended with who, what, when, its request id
and its outcome (api/audit_trail.py records them), readable by a project's owners."""

from __future__ import annotations

import builtins
import logging

from naturali.errors import InvalidRequest
from naturali.model import AuditEntry, User
from naturali.ports.storage import Storage
from naturali.service.platform.auth import Auth

log = logging.getLogger("naturali.audit")
MAX_PAGE = 100


class AuditTrail:
    def __init__(self, storage: Storage, auth: Auth) -> None:
        self._storage = storage
        self._auth = auth

    def record(self, entry: AuditEntry) -> None:
        """Append a write that was answered (its outcome included); a failure to append is
        logged, not turned into a failure of the write that already happened."""
        try:
            self._storage.append_audit(entry)
        except Exception:
            log.exception(
                "could not append %s %s to the audit trail", entry.request_id, entry.operation
            )

    def list(
        self,
        user: User,
        project_id: str,
        since: str | None = None,
        until: str | None = None,
        operation: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> tuple[builtins.list[AuditEntry], str | None]:
        """A page of the project's trail, oldest first, and the cursor of the next (owners)."""
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(
                f"limit must be between 1 and {MAX_PAGE}, got {limit}",
                code="invalid_limit",
                param="limit",
            )
        if cursor is not None and not cursor.isdigit():
            raise InvalidRequest(
                "cursor is not one this API gave", code="invalid_cursor", param="cursor"
            )
        after = int(cursor) if cursor else 0
        rows = self._storage.list_audit(project_id, since, until, operation, after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        return rows, str(rows[-1].seq) if more else None

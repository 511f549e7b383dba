"""Every response carries ``X-Request-Id``; every write through the API (a catalogue or
resource operation that writes) is appended to the audit trail with who made it (user and
token name), what (the route and the ids it named, and the id it created), when, the request
id, the status and the grant it ran under. Never a query, a body or a document's content."""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import replace

from anyio import to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from naturali.api.guard import USER_KEY
from naturali.catalogue import ENTRIES
from naturali.model import AuditEntry, User, utcnow
from naturali.service.container import Services

REQUEST_ID = "request_id"
# A write is an entry that is not a GET and changes something: not a search or a read sent
# as a POST (a "read" role), every write, an owner's and a token's.
WRITES = {(op.method, op.path) for op in ENTRIES if op.method != "GET" and op.role != "read"}
_MAX_BODY = 64 * 1024  # a write's answer is small; read only to find the id it created

log = logging.getLogger("naturali.audit")


class AuditTrailMiddleware:
    def __init__(self, app: ASGIApp, naturali: Services) -> None:
        self.app = app
        self.naturali = naturali

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = "req_" + secrets.token_hex(8)
        scope.setdefault("state", {})[REQUEST_ID] = request_id
        status, body = 500, bytearray()
        held: list[Message] = []  # a write's answer, sent once its entry is appended
        recorded = False

        async def record() -> None:
            nonlocal recorded
            recorded = True
            entry = _entry(scope, request_id, status, bytes(body))
            if entry is None:
                return
            try:
                await to_thread.run_sync(self._record, entry, scope["state"][USER_KEY])
            except Exception:
                # The write itself stands (a full disk, the catalog gone for a moment): its
                # caller is told the truth, and the operator that its entry is missing.
                log.exception("the audit entry of %s %s was not written", request_id, status)

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                header = (b"x-request-id", request_id.encode())
                message["headers"] = [*message.get("headers", []), header]
                if _is_write(scope):  # routed by now
                    held.append(message)
                    return
            elif held:
                if len(body) < _MAX_BODY:
                    body.extend(message.get("body", b"")[: _MAX_BODY - len(body)])
                held.append(message)
                if message.get("more_body", False):
                    return
                # In the trail before the client hears of it: an acknowledged write is there.
                await record()
                for waiting in held:
                    await send(waiting)
                held.clear()
                return
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            if not recorded:  # no answer was completed (the client left, or an error)
                await record()

    def _record(self, entry: AuditEntry, user: User) -> None:
        """Append ``entry`` with the grant its call ran under (its token's and membership's)."""
        grant = self.naturali.auth.grant_of(user, entry.project_id)
        self.naturali.audit.record(replace(entry, grant=grant))


def _is_write(scope: Scope) -> bool:
    return (scope["method"], getattr(scope.get("route"), "path", None)) in WRITES


def _entry(scope: Scope, request_id: str, status: int, body: bytes) -> AuditEntry | None:
    user: User | None = scope.get("state", {}).get(USER_KEY)
    if user is None or not _is_write(scope):
        return None
    route = scope["route"].path
    ids = {k: str(v) for k, v in scope.get("path_params", {}).items()}
    created = _created_id(body) if 200 <= status < 300 else None
    if created is not None:
        ids["created"] = created
    project_id = ids.get("project_id") or (created if route == "/v1/projects" else None)
    return AuditEntry(
        at=utcnow(),
        project_id=project_id,
        user_id=user.id,
        token_name=user.token_name,
        request_id=request_id,
        operation=f"{scope['method']} {route}",
        ids=ids,
        status=status,
    )


def _created_id(body: bytes) -> str | None:
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    created = answer.get("id") if isinstance(answer, dict) else None
    return created if isinstance(created, str) else None

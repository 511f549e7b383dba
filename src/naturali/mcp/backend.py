"""Where the MCP tools send their calls: the service on a data dir, or a server over HTTP
(through the SDK). Both take a catalogue operation and its validated request and return the
operation's wire form; no retrieval or write logic lives here."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from naturali.catalogue.operation import Operation, Target
from naturali.errors import NaturaliError
from naturali.model import User
from naturali.service.container import Services
from naturali_client import Client, NaturaliAPIError, NaturaliConnectionError
from naturali_client._operations import http_call


class BackendError(Exception):
    """A call failed; ``message`` says what to fix."""


class Backend(Protocol):
    def call(
        self, operation: Operation, request: BaseModel, store_id: str | None = None
    ) -> dict[str, Any]:
        """The operation's wire response, on the server's store or on ``store_id``."""
        ...

    def model(self) -> str | None:
        """The embedding model the project's passages are embedded with (None: unknown)."""
        ...


class LocalBackend:
    """The service layer on a data dir, acting as ``user``."""

    def __init__(self, services: Services, user: User, target: Target) -> None:
        self._services, self._user, self._target = services, user, target

    def call(
        self, operation: Operation, request: BaseModel, store_id: str | None = None
    ) -> dict[str, Any]:
        target = Target(self._target.project_id, store_id or self._target.store_id)
        try:
            result: BaseModel = operation.invoke(self._services, self._user, target, request)
        except NaturaliError as exc:
            raise BackendError(explain(exc, operation)) from exc
        return result.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def model(self) -> str | None:
        project = self._services.storage.get_project(self._target.project_id)
        return self._services.embedders.name_of(project) if project is not None else None


class RemoteBackend:
    """A naturali server through the SDK (``--base-url`` and ``NATURALI_TOKEN``)."""

    def __init__(self, client: Client, target: Target) -> None:
        self._client, self._target = client, target

    def call(
        self, operation: Operation, request: BaseModel, store_id: str | None = None
    ) -> dict[str, Any]:
        store = store_id or self._target.store_id
        ids = {"project_id": self._target.project_id, "memory_store_id": store}
        fields = request.model_dump(mode="json", exclude_none=True)
        url, extra = http_call(operation.method, operation.path, operation.path_field, ids, fields)
        try:
            return dict(self._client.request(operation.method, url, **extra))
        except NaturaliAPIError as exc:
            raise BackendError(explain(exc, operation)) from exc
        except NaturaliConnectionError as exc:
            raise BackendError(f"{exc}; check that the naturali server is running") from exc

    def model(self) -> str | None:
        try:
            return self._client.projects.get(project_id=self._target.project_id).embedding_model
        except (NaturaliAPIError, NaturaliConnectionError):  # said when a tool is called
            return None


# The HTTP path's slots, by the names the service gives them; a tool takes them as fields.
_PATH_SLOTS = ("record_id", "requestId")


class _Refusal(Protocol):
    message: str
    param: str | None


def explain(error: _Refusal, operation: Operation) -> str:
    """A refusal for an agent, naming the tool's own parameter: the record a tool names by
    ``id`` is the HTTP path's ``record_id``."""
    param = error.param
    if param in _PATH_SLOTS and operation.path_field is not None:
        param = operation.path_field
    message = error.message
    if param and error.param and param != error.param:
        message = message.replace(error.param, param)
    return f"{message} (parameter: {param})" if param else message

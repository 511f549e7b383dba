"""What an entry of the catalogue is: an operation of the HTTP API with its name and
description, request and result models, the role it needs, its method, path and status codes,
the SDK method it is, and the service call that runs it for a target (a project, its memory
store, the item the path names). The routes, the OpenAPI document, the audit trail and the
SDK's checks are made from the entries; those that are tools (``cli`` set) are also the MCP
tools and the ``naturali knowledge`` commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from naturali.model import User
from naturali.service import requests as req
from naturali.service.platform import grants

if TYPE_CHECKING:  # the CLI loads the catalogue for its commands without the service stack
    from naturali.service.container import Services

# Who may call: "any" signed-in user, a member with the role ("read", "write", "owner"), or an
# "admin" token (the caller's own tokens, no project's).
Role = Literal["any", "read", "write", "owner", "admin"]
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
PROJECT = "/v1/projects/{project_id}"
STORE_BASE = PROJECT + "/memory_stores/{memory_store_id}/knowledge"
FIXED = ("project_id", "memory_store_id")  # the path's slots every target carries


@dataclass(frozen=True)
class Target:
    """Whose data an operation acts on: a project, its store, the one item its path names."""

    project_id: str = ""
    store_id: str = ""
    item: str = ""


Runner = Callable[["Services", User, Target, Any], BaseModel | None]


class NoFields(req.Strict):
    """An operation whose path says everything."""


@dataclass(frozen=True)
class Operation:
    name: str
    doc: str  # what the operation does, for agents, OpenAPI and --help
    request: type[req.Strict]  # a POST/PUT/PATCH's JSON body, else its query string
    result: type[BaseModel] | None  # None: 204, no body
    role: Role
    method: Method
    path: str  # absolute, with {project_id}, {memory_store_id} and maybe one more slot
    run: Runner
    sdk: str  # the Python SDK method, as ``group.method``
    cli: str | None = None  # a tool: the ``naturali knowledge`` command, and an MCP tool
    tag: str = "records"  # its group in the OpenAPI schema and the TypeScript SDK
    http_name: str | None = None  # its OpenAPI operation id, when not ``name``
    path_field: str | None = None  # the request field that fills the path's last slot
    # The field the CLI takes as its positional argument: what the command is about (a query,
    # an id, an entity), never a date — dates are options everywhere (--since, --date).
    argument: str | None = None
    # Begun as a request arrives, before the operation waits for one of the API's search
    # lanes (api/search_lanes.py), so the wait overlaps it; None: no lane, the thread pool.
    ahead: Callable[[Services, Target, Any], object] | None = None
    status: int = 200  # its answer's status (201 created, 202 accepted, 204 no body)
    # Another status its answer may take, by what it says (202 while a document is embedded
    # in the background), with that answer's description.
    status_of: Callable[[Any], int] | None = None
    also: tuple[int, str] | None = None
    errors: tuple[int, ...] | None = None  # beyond 400, 401, 404; None: by its role
    upload: bool = False  # the body is a file (multipart) or, as ``request``, JSON text
    # It acts on the whole project (its settings, its audit trail): refused to a caller
    # granted only some of it.
    whole: bool = False

    @property
    def id(self) -> str:
        """Its OpenAPI operation id and route name."""
        return self.http_name or self.name

    @property
    def in_store(self) -> bool:
        """Whether it acts inside one memory store (an MCP session names one for every tool,
        the project's too)."""
        return "{memory_store_id}" in self.path

    @property
    def is_tool(self) -> bool:
        return self.cli is not None

    @property
    def error_statuses(self) -> tuple[int, ...]:
        if self.errors is not None:
            return self.errors
        # A role beyond reading may be refused (403); every store, and a search that reads
        # stores, may meet another store's state.sqlite or a vault over its limit (409).
        return ((403,) if self.role != "read" else ()) + (409,)

    def invoke(self, services: Services, user: User, target: Target, request: Any) -> Any:
        """The one check of who may call it, made from the entry, then the call, under what
        of the project the caller was granted: its store (when the path names one) and the
        whole project are checked here, paths by the service, which knows them."""
        admitted = services.auth.admit(user, target.project_id, self.role)
        if self.whole:
            grants.whole_project(admitted)
        if target.store_id and self.in_store:
            reading = self.role == "read"
            (grants.readable_store if reading else grants.writable_store)(admitted, target.store_id)
        return self.run(services, admitted, target, request)

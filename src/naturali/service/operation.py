"""What an operation of the catalogue is (service/operations.py): its name and description,
request and result models, required role, where it lives over HTTP, the CLI command and SDK
method it is, and the service method that runs it for a target (a project, and for the
records tools its memory store)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from naturali.model import User
from naturali.service import requests as req

if TYPE_CHECKING:  # the CLI loads the catalogue for its commands without the service stack
    from naturali.service.container import Services

Role = Literal["any", "read", "write", "owner"]  # "any": every signed-in user
PROJECT = "/v1/projects/{project_id}"
STORE_BASE = PROJECT + "/memory_stores/{memory_store_id}/knowledge"


@dataclass(frozen=True)
class Target:
    """Whose data an operation acts on: a project, and for the records tools its store."""

    project_id: str
    store_id: str


Runner = Callable[["Services", User, Target, Any], BaseModel]


@dataclass(frozen=True)
class Operation:
    name: str
    doc: str  # what the operation does, for agents and for --help
    request: type[req.Strict]
    result: type[BaseModel]
    role: Role
    method: Literal["GET", "POST"]
    path: str  # absolute, with {project_id}, {memory_store_id} and maybe one field's slot
    run: Runner
    cli: str  # the ``naturali knowledge`` command
    sdk: str  # the Python SDK method, as ``group.method``
    tag: str = "records"  # its group in the OpenAPI schema and the TypeScript SDK
    http_name: str | None = None  # its OpenAPI operation id, when not ``name``
    path_field: str | None = None  # the request field that fills the path's last slot
    # The field the CLI takes as its positional argument: what the command is about (a query,
    # an id, an entity), never a date — dates are options everywhere (--since, --date).
    argument: str | None = None
    # Begun as a request arrives, before the operation waits for one of the API's search
    # lanes (api/search_lanes.py), so the wait overlaps it; None: no lane, the thread pool.
    ahead: Callable[[Services, Target, Any], object] | None = None

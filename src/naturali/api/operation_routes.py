"""The knowledge operations over HTTP, registered from the catalogue (service/operations.py)
as the CLI's commands and the MCP tools are: each route's method, path, name, description,
request and result models, and error statuses come from its operation, so OpenAPI, the SDKs,
the CLI and MCP describe it alike. A POST takes the request model as its JSON body (named as
the specs name the fields); a GET fills the path's slot from one field and takes the others
from its query string. An operation with ``ahead`` (the search) runs in a search lane, what
``ahead`` begins overlapping the wait."""

from __future__ import annotations

import re
from inspect import Parameter, Signature
from typing import Annotated, Any

from fastapi import FastAPI, Query, Response
from pydantic import BaseModel, ValidationError

from naturali.api import errors, search_lanes
from naturali.api.deps import CurrentUser, Service
from naturali.model import User
from naturali.service.container import Services
from naturali.service.operation import Operation, Target
from naturali.service.operations import OPERATIONS

_SLOT = re.compile(r"\{(\w+)\}$|\{(\w+)\}/\w+$")  # a field's slot, last or next to last
_FIXED = ("project_id", "memory_store_id")


def register(app: FastAPI) -> None:
    for operation in OPERATIONS:
        app.add_api_route(
            operation.path,
            _endpoint(operation),
            methods=[operation.method],
            name=operation.http_name or operation.name,
            description=operation.doc,
            response_model=operation.result,
            response_model_exclude_unset=True,
            tags=[operation.tag],
            # A role beyond reading may be refused (403); every store, and a search that
            # reads stores, may meet another store's state.sqlite or a vault over its limit.
            responses=errors.responses(*((403,) if operation.role != "read" else ()), 409),
        )


def _endpoint(operation: Operation) -> Any:
    slot = _slot(operation)
    params = [_param(name, str) for name in _FIXED if "{" + name + "}" in operation.path]
    if operation.method == "POST":
        params.append(_param("body", operation.request))
    else:
        params += [_param(slot, str)] if slot else []
        params += [_query(name, field) for name, field in _query_fields(operation)]
    params += [_param("user", CurrentUser), _param("svc", Service)]

    def request_of(values: dict[str, Any]) -> BaseModel:
        if operation.method == "POST":
            body: BaseModel = values["body"]
            return body
        given = {n: values[n] for n, _ in _query_fields(operation) if values[n] is not None}
        if slot is not None and operation.path_field is not None:
            given[operation.path_field] = values[slot]
        try:
            return operation.request.model_validate(given)
        except ValidationError as exc:
            raise errors.from_validation([dict(e) for e in exc.errors()]) from exc

    def target_of(values: dict[str, Any]) -> Target:
        return Target(values["project_id"], values.get("memory_store_id", ""))

    def call(values: dict[str, Any]) -> BaseModel:
        user: User = values["user"]
        return operation.run(values["svc"], user, target_of(values), request_of(values))

    if operation.ahead is None:

        def endpoint(**values: Any) -> BaseModel:
            return call(values)
    else:
        ahead = operation.ahead

        async def endpoint(**values: Any) -> Any:  # type: ignore[misc]
            services: Services = values["svc"]
            ahead(services, target_of(values), request_of(values))

            def answer() -> bytes:
                return call(values).model_dump_json(exclude_unset=True).encode()

            lanes = services.concurrency.lanes
            body = await search_lanes.in_lane(lanes, answer)
            return Response(body, media_type="application/json")

    endpoint.__name__ = operation.http_name or operation.name
    endpoint.__doc__ = operation.doc
    endpoint.__signature__ = Signature(params)  # type: ignore[attr-defined]
    return endpoint


def _slot(operation: Operation) -> str | None:
    if operation.path_field is None:
        return None
    match = _SLOT.search(operation.path)
    assert match is not None, operation.path
    return match.group(1) or match.group(2)


def _query_fields(operation: Operation) -> list[tuple[str, Any]]:
    return [
        (name, field)
        for name, field in operation.request.model_fields.items()
        if name != operation.path_field
    ]


def _param(name: str, annotation: Any) -> Parameter:
    return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation)


def _query(name: str, field: Any) -> Parameter:
    annotation = Annotated[field.annotation | None, Query(description=field.description)]
    return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation, default=None)

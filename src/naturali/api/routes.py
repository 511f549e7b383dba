"""Every HTTP route, registered from the catalogue (catalogue/): each route's method, path,
name, description, request and result models, statuses and errors come from its entry, so
OpenAPI, the SDKs, the CLI and MCP describe it alike, and its entry's role is checked once
(Operation.invoke). A POST, PUT or PATCH takes the request model as its JSON body (an upload
also a file, api/uploads.py); a GET or DELETE fills the path's slot from one field and takes
the others from its query string. An operation with ``ahead`` (the search) runs in a search
lane, what ``ahead`` begins overlapping the wait; the others in the thread pool."""

from __future__ import annotations

import re
from dataclasses import dataclass
from inspect import Parameter, Signature
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from naturali.api import errors, search_lanes, uploads
from naturali.api.deps import CurrentUser, Service
from naturali.catalogue import ENTRIES
from naturali.catalogue.operation import FIXED, NoFields, Operation, Target
from naturali.service.container import Services

_SLOTS = re.compile(r"\{(\w+)\}")


def register(app: FastAPI) -> None:
    for operation in ENTRIES:
        app.add_api_route(
            operation.path,
            _endpoint(operation),
            methods=[operation.method],
            name=operation.id,
            description=operation.doc,
            status_code=operation.status,
            response_model=operation.result,
            response_model_exclude_unset=True,
            tags=[operation.tag],
            responses={**_also(operation), **errors.responses(*operation.error_statuses)},
            openapi_extra=uploads.body_schema(operation.request) if operation.upload else None,
        )


def _also(operation: Operation) -> dict[int | str, dict[str, Any]]:
    if operation.also is None:
        return {}
    status, description = operation.also
    return {status: {"model": operation.result, "description": description}}


def _has_body(operation: Operation) -> bool:
    return operation.method in ("POST", "PUT", "PATCH") and operation.request is not NoFields


@dataclass(frozen=True)
class _Route:
    """What a route makes of its arguments: the request, the target, the entry's answer."""

    operation: Operation
    item: str | None  # the path's slot beyond the project and the store, if any
    query: tuple[str, ...]  # the request's fields a query string carries

    def request(self, values: dict[str, Any]) -> Any:
        op = self.operation
        if _has_body(op):
            return values["body"]
        given = {n: values[n] for n in self.query if values[n] is not None}
        if self.item is not None and op.path_field is not None:
            given[op.path_field] = values[self.item]
        try:
            return op.request.model_validate(given)
        except ValidationError as exc:
            raise errors.from_validation([dict(e) for e in exc.errors()]) from exc

    def target(self, values: dict[str, Any]) -> Target:
        slot = self.item if self.operation.path_field is None else None
        item = values[slot] if slot is not None else ""
        return Target(values.get("project_id", ""), values.get("memory_store_id", ""), item)

    def call(self, values: dict[str, Any], request: Any) -> Any:
        op = self.operation
        result = op.invoke(values["svc"], values["user"], self.target(values), request)
        if op.status_of is not None:
            values["response"].status_code = op.status_of(result)
        return result


def _endpoint(operation: Operation) -> Any:
    slots = _SLOTS.findall(operation.path)
    item = next((s for s in slots if s not in FIXED), None)
    route = _Route(operation, item, tuple(name for name, _ in _query_fields(operation)))
    if operation.upload:

        async def endpoint(**values: Any) -> Any:
            upload = await uploads.read(values["request"], update=operation.method == "PUT")
            return await run_in_threadpool(route.call, values, upload)  # embedding: CPU-bound
    elif operation.ahead is None:

        def endpoint(**values: Any) -> Any:  # type: ignore[misc]
            return route.call(values, route.request(values))
    else:
        ahead = operation.ahead

        async def endpoint(**values: Any) -> Any:
            services: Services = values["svc"]
            request = route.request(values)
            ahead(services, route.target(values), request)

            def answer() -> bytes:
                result: BaseModel = route.call(values, request)
                return result.model_dump_json(exclude_unset=True).encode()

            body = await search_lanes.in_lane(services.concurrency.lanes, answer)
            return Response(body, media_type="application/json")

    endpoint.__name__ = operation.id
    endpoint.__doc__ = operation.doc
    endpoint.__signature__ = Signature(_parameters(operation, slots))  # type: ignore[attr-defined]
    return endpoint


def _parameters(operation: Operation, slots: list[str]) -> list[Parameter]:
    """What FastAPI reads for the route: its path's slots, its body or query string."""
    params = [_param(name, str) for name in slots]
    if operation.upload:
        params.append(_param("request", Request))
    elif _has_body(operation):
        params.append(_param("body", operation.request))
    else:
        params += [_query(name, field) for name, field in _query_fields(operation)]
    return params + [
        _param("response", Response),
        _param("user", CurrentUser),
        _param("svc", Service),
    ]


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

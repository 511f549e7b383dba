"""Every HTTP failure has one shape: ``{"error": {"type", "code", "message", "param"}}``.
Validation failures are 400 (never FastAPI's default 422 shape)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from naturali.contracts.described import Described
from naturali.errors import InvalidRequest, NaturaliError, TooManyRequests
from naturali.service.invalid_input import invalid_request

_HTTP_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


class ErrorBody(Described):
    type: str
    code: str
    message: str
    param: str | None


class ErrorResponse(Described):
    error: ErrorBody


_DESCRIPTIONS = {
    400: "Invalid request",
    401: "Missing or bad token",
    403: "The member's role does not allow it",
    404: "Not found (or not a member of the project)",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
}


def responses(*statuses: int) -> dict[int | str, dict[str, object]]:
    """OpenAPI entries for the error statuses a route gives beyond those every route gives
    (see ``api.app._document_errors``)."""
    return {s: {"model": ErrorResponse, "description": _DESCRIPTIONS[s]} for s in statuses}


def openapi_entry(status: int) -> dict[str, Any]:
    """A rendered OpenAPI response for an error status (ErrorResponse is a component, as
    routes that declare ``responses`` reference it)."""
    return {
        "description": _DESCRIPTIONS[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
    }


def error_response(
    status: int,
    type_: str,
    code: str,
    message: str,
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"type": type_, "code": code, "message": message, "param": param}}
    # RFC 6750: a 401 names the scheme the client must use.
    extra = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    return JSONResponse(body, status_code=status, headers={**(headers or {}), **extra})


def naturali_error_response(exc: NaturaliError) -> JSONResponse:
    """A service's refusal as the one error shape (a 429 with its ``Retry-After``)."""
    response = error_response(exc.status, exc.type, exc.code, exc.message, exc.param)
    if isinstance(exc, TooManyRequests):
        response.headers["Retry-After"] = str(exc.retry_after)
    return response


def validation_error_response(exc: ValidationError) -> JSONResponse:
    """A model's validation failure (raised outside FastAPI's body check) as a 400."""
    err = from_validation([dict(e) for e in exc.errors()])
    return error_response(400, err.type, err.code, err.message, err.param)


def from_validation(errors: list[dict[str, object]], *, located: bool = False) -> InvalidRequest:
    """The first pydantic error as an InvalidRequest in our own words (service/invalid_input)."""
    return invalid_request(errors, located=located)


def _allowed_methods(app: FastAPI, path: str) -> str:
    """Every method some operation serves at this path (RFC 9110's Allow), from the OpenAPI
    paths: Starlette names only the first matching route's, and FastAPI makes one route per
    method."""
    methods: set[str] = set()
    for template, operations in app.openapi()["paths"].items():
        if re.fullmatch(re.sub(r"\{[^/]+\}", "[^/]+", template), path):
            methods |= {m.upper() for m in operations}
    return ", ".join(sorted(methods))


def install(app: FastAPI) -> None:
    @app.exception_handler(NaturaliError)
    async def _naturali(_: Request, exc: NaturaliError) -> JSONResponse:
        return naturali_error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        err = from_validation(list(exc.errors()), located=True)
        return error_response(400, err.type, err.code, err.message, err.param)

    @app.exception_handler(ValidationError)
    async def _pydantic(_: Request, exc: ValidationError) -> JSONResponse:
        return validation_error_response(exc)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        type_ = _HTTP_TYPES.get(exc.status_code, "api_error")
        code = {404: "route_not_found", 405: "method_not_allowed"}.get(exc.status_code, type_)
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed_methods(app, request.url.path)
        return error_response(exc.status_code, type_, code, str(exc.detail), headers=headers)

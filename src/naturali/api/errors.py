"""Every HTTP failure has one shape: ``{"error": {"type", "code", "message", "param"}}``.
Validation failures are 400 (never FastAPI's default 422 shape)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException

from naturali.errors import InvalidRequest, NaturaliError

log = logging.getLogger("naturali.api")

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


class ErrorBody(BaseModel):
    type: str
    code: str
    message: str
    param: str | None


class ErrorResponse(BaseModel):
    error: ErrorBody


def error_response(
    status: int, type_: str, code: str, message: str, param: str | None = None
) -> JSONResponse:
    body = {"error": {"type": type_, "code": code, "message": message, "param": param}}
    return JSONResponse(body, status_code=status)


def from_validation(errors: list[dict[str, object]]) -> InvalidRequest:
    """The first pydantic error as an InvalidRequest naming the offending field."""
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    raw_loc = first.get("loc", ())
    parts = raw_loc if isinstance(raw_loc, (list, tuple)) else ()
    loc = [str(p) for p in parts if p not in ("body", "query", "path")]
    param = ".".join(loc) or None
    kind = str(first.get("type", ""))
    message = str(first.get("msg", "invalid request"))
    if kind == "extra_forbidden":
        message = f"unknown field {param!r}"
        code = "unknown_field"
    elif kind == "missing":
        message = f"{param} is required"
        code = "missing_field"
    elif kind == "json_invalid":
        message = "the body is not valid JSON"
        code = "invalid_json"
    else:
        message = f"{param}: {message}" if param else message
        code = "invalid_value"
    return InvalidRequest(message, code=code, param=param)


def install(app: FastAPI) -> None:
    @app.exception_handler(NaturaliError)
    async def _naturali(_: Request, exc: NaturaliError) -> JSONResponse:
        return error_response(exc.status, exc.type, exc.code, exc.message, exc.param)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        err = from_validation(list(exc.errors()))
        return error_response(400, err.type, err.code, err.message, err.param)

    @app.exception_handler(ValidationError)
    async def _pydantic(_: Request, exc: ValidationError) -> JSONResponse:
        err = from_validation([dict(e) for e in exc.errors()])
        return error_response(400, err.type, err.code, err.message, err.param)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, exc: HTTPException) -> JSONResponse:
        type_ = _HTTP_TYPES.get(exc.status_code, "api_error")
        code = "route_not_found" if exc.status_code == 404 else type_
        return error_response(exc.status_code, type_, code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return error_response(500, "api_error", "internal_error", "internal server error")

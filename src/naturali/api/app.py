"""The FastAPI application: routes under /v1, bearer tokens, one error shape."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

from naturali import __version__
from naturali.api import errors
from naturali.api.errors import ErrorResponse, error_response
from naturali.api.routes import (
    dates,
    documents,
    knowledge,
    memories,
    mutations,
    projects,
    records,
)
from naturali.service.app import Naturali

_ERRORS = {
    status: {"model": ErrorResponse, "description": text}
    for status, text in (
        (400, "Invalid request"),
        (401, "Missing or bad token"),
        (403, "Role does not allow it"),
        (404, "Not found (or not a member)"),
        (409, "Conflict"),
        (413, "Upload too large"),
        (415, "Unsupported media type"),
    )
}


def create_app(naturali: Naturali) -> FastAPI:
    app = FastAPI(
        title="naturali",
        version=__version__,
        description="A self-hosted knowledge layer for AI agents.",
        responses=_ERRORS,  # type: ignore[arg-type]
    )
    app.state.naturali = naturali
    errors.install(app)
    for module in (projects, documents, memories, knowledge, records, dates, mutations):
        app.include_router(module.router)

    limit = naturali.settings.max_upload_bytes

    @app.middleware("http")
    async def _body_limit(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        # Refuse an oversized body before reading it (multipart adds a little framing).
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > limit + 64 * 1024:
            return error_response(
                413,
                "payload_too_large",
                "upload_too_large",
                f"the request body is larger than {limit} bytes",
            )
        return await call_next(request)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app

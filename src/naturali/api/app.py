"""The FastAPI application: routes under /v1, bearer tokens, one error shape."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.requests import Request

from naturali import __version__
from naturali.api import errors, routes
from naturali.api.access_log import AccessLog
from naturali.api.audit_trail import AuditTrailMiddleware
from naturali.api.guard import RequestGuard
from naturali.api.metrics import Metrics
from naturali.api.security_headers import SecurityHeaders
from naturali.api.unexpected import AnswerUnexpected
from naturali.contracts import glossary
from naturali.service.container import Services

UI_DIR = Path(__file__).resolve().parents[1] / "ui"


def create_app(naturali: Services, *, close_on_shutdown: bool = False) -> FastAPI:
    """The API on ``naturali``; ``close_on_shutdown`` closes the services when the server stops
    (``naturali serve``: after uvicorn has let the requests in flight finish, the app's
    shutdown is the last moment to hand ingestion back and save the search indexes)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        naturali.ingestion.start()  # jobs a stopped server left resume
        naturali.source_worker.start()  # and syncs that are due
        naturali.model_work.start()  # and projects moving to another embedding model
        yield
        if close_on_shutdown:
            naturali.close()

    app = FastAPI(
        lifespan=lifespan,
        title="naturali",
        version=__version__,
        description="A self-hosted knowledge layer for AI agents.",
        # Operation ids are the route functions' names (search_knowledge, knowledge_grep…), so
        # generated clients read naturally: naturali.knowledge.searchKnowledge(…).
        generate_unique_id_function=_operation_id,
    )
    app.state.naturali = naturali
    errors.install(app)
    routes.register(app)  # every route, from the catalogue

    # Added last is outermost: the log sees every answer, the guard's refusals included, and
    # an unexpected exception is answered outside all of them.
    app.add_middleware(RequestGuard, naturali=naturali)
    app.add_middleware(AuditTrailMiddleware, naturali=naturali)
    metrics = Metrics(naturali)
    app.add_middleware(AccessLog, record=metrics.observe_request)
    app.add_middleware(AnswerUnexpected)
    app.add_middleware(SecurityHeaders)  # on every answer, a 500's too
    _document_errors(app)

    _operations(app, naturali, metrics)

    # The Control UI: static files on the public API (every asset served here, none fetched
    # from elsewhere), signed in with a token the browser keeps for the tab.
    app.mount("/ui", StaticFiles(directory=UI_DIR, html=True), name="ui")
    return app


def _operations(app: FastAPI, naturali: Services, metrics: Metrics) -> None:
    """What an operator's tools call: liveness, readiness and the metrics."""

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        """Alive: the process answers."""
        return {"status": "ok"}

    @app.get("/metrics", include_in_schema=False)
    def metrics_text(request: Request) -> Response:
        """Prometheus' text format, for the bearer of ``metrics_token`` (404 without one set:
        the metrics are off)."""
        expected = naturali.settings.metrics_token
        given = request.headers.get("authorization", "")
        if not expected:
            return JSONResponse(_error(404, "metrics_disabled", "set metrics_token"), 404)
        if not hmac.compare_digest(given, f"Bearer {expected}"):
            return JSONResponse(_error(401, "invalid_token", "the metrics token is needed"), 401)
        return Response(metrics.text(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/readyz", include_in_schema=False)
    def readyz() -> JSONResponse:
        """Ready to answer searches: the model and saved indexes loaded, the catalog reachable
        (503 with what it waits for otherwise), for a load balancer's readiness check."""
        waiting = naturali.readiness()
        if waiting:
            return JSONResponse({"status": "waiting", "waiting": waiting}, status_code=503)
        return JSONResponse({"status": "ready"})


def _document_errors(app: FastAPI) -> None:
    """OpenAPI lists the errors each operation really gives: 400 and 401 everywhere, 404 on
    routes with ids in the path, and what the route declares itself (403, 409, 413, 415).
    FastAPI's default 422 is never returned here, so it is taken out."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        for path, operations in schema["paths"].items():
            for operation in operations.values():
                responses = operation["responses"]
                responses.pop("422", None)
                statuses = [400, 401] + ([404] if "{" in path else [])
                for status in statuses:
                    responses.setdefault(str(status), errors.openapi_entry(status))
                _describe_parameters(operation.get("parameters", []))
        for name in ("HTTPValidationError", "ValidationError"):
            schema["components"]["schemas"].pop(name, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _describe_parameters(parameters: list[dict[str, Any]]) -> None:
    """Path and query parameters are described as the glossary says, as body fields are."""
    for parameter in parameters:
        name = parameter["name"]
        parameter.setdefault("description", glossary.description("parameter", name))
        sample = glossary.example("parameter", name)
        if sample is not None:
            parameter.setdefault("example", sample)


def _operation_id(route: APIRoute) -> str:
    return route.name


def _error(status: int, code: str, message: str) -> dict[str, object]:
    kind = "authentication_error" if status == 401 else "invalid_request_error"
    return {"error": {"type": kind, "code": code, "message": message, "param": None}}

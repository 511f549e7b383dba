"""Where the MCP tools send their calls: the service on a data dir, or a server over HTTP
(through the SDK). Both take the tools' parameters and return the API's complete responses;
no retrieval or write logic lives here."""

from __future__ import annotations

from typing import Any, Protocol

from naturali.client import Client, NaturaliAPIError, NaturaliConnectionError
from naturali.errors import NaturaliError
from naturali.model import User
from naturali.service import requests as req
from naturali.service.container import Services


class BackendError(Exception):
    """A call failed; ``message`` says what to fix."""


class Backend(Protocol):
    def call(self, tool: str, params: dict[str, Any]) -> dict[str, Any]: ...


_REQUESTS: dict[str, type[req.Strict]] = {
    "knowledge_grep": req.GrepRequest,
    "knowledge_lookup": req.LookupRequest,
    "knowledge_records": req.RecordsRequest,
    "knowledge_timeline": req.TimelineRequest,
    "knowledge_chronicle_day": req.ChronicleDayRequest,
    "knowledge_chronicle_since": req.ChronicleSinceRequest,
    "knowledge_chronicle_last_seen": req.LastSeenRequest,
    "knowledge_save": req.SaveRequest,
    "knowledge_correct": req.CorrectRequest,
    "knowledge_withdraw": req.WithdrawRequest,
    "knowledge_search": req.SearchRequest,
}


class LocalBackend:
    """The service layer on a data dir, acting as ``user``."""

    def __init__(self, naturali: Services, user: User, project_id: str, store_id: str) -> None:
        self._n, self._user, self._project, self._store = naturali, user, project_id, store_id

    def call(self, tool: str, params: dict[str, Any]) -> dict[str, Any]:
        n, u, p, s = self._n, self._user, self._project, self._store
        try:
            model = _REQUESTS.get(tool)
            body: Any = model.model_validate(params) if model else None
            match tool:
                case "knowledge_grep":
                    return n.records.grep(u, p, s, body)
                case "knowledge_lookup":
                    return n.records.lookup(u, p, s, body)
                case "knowledge_records":
                    return n.records.records(u, p, s, body)
                case "knowledge_record":
                    return n.records.record(u, p, s, params["id"])
                case "knowledge_timeline":
                    return n.dates.timeline(u, p, s, body)
                case "knowledge_chronicle_day":
                    return n.dates.chronicle_day(u, p, s, body)
                case "knowledge_chronicle_since":
                    return n.dates.chronicle_since(u, p, s, body)
                case "knowledge_chronicle_last_seen":
                    return n.dates.last_seen(u, p, s, body)
                case "knowledge_mutation":
                    return n.mutations.mutation(u, p, s, params["requestId"])
                case "knowledge_history":
                    return n.mutations.history(u, p, s, params["id"])
                case "knowledge_save":
                    return n.mutations.save(u, p, s, body)
                case "knowledge_correct":
                    return n.mutations.correct(u, p, s, body)
                case "knowledge_withdraw":
                    return n.mutations.withdraw(u, p, s, body)
                case "knowledge_resume":
                    return n.mutations.resume(u, p, s)
                case "knowledge_search":
                    return {"results": n.search.search(u, p, body)}
        except NaturaliError as exc:
            raise BackendError(_explain(exc.message, exc.param)) from exc
        except ValueError as exc:  # pydantic validation
            raise BackendError(str(exc)) from exc
        raise BackendError(f"unknown tool {tool}")


class RemoteBackend:
    """A naturali server through the SDK (``--base-url`` and ``NATURALI_TOKEN``)."""

    def __init__(self, client: Client, project_id: str, store_id: str) -> None:
        self._client, self._project, self._store = client, project_id, store_id

    def call(self, tool: str, params: dict[str, Any]) -> dict[str, Any]:
        base = f"/v1/projects/{self._project}/memory_stores/{self._store}/knowledge"
        routes = {
            "knowledge_grep": ("POST", "/grep"),
            "knowledge_lookup": ("POST", "/lookup"),
            "knowledge_records": ("POST", "/records"),
            "knowledge_timeline": ("POST", "/timeline"),
            "knowledge_chronicle_day": ("POST", "/chronicle/day"),
            "knowledge_chronicle_since": ("POST", "/chronicle/since"),
            "knowledge_chronicle_last_seen": ("POST", "/chronicle/last_seen"),
            "knowledge_save": ("POST", "/save"),
            "knowledge_correct": ("POST", "/correct"),
            "knowledge_withdraw": ("POST", "/withdraw"),
            "knowledge_resume": ("POST", "/resume"),
        }
        try:
            if tool == "knowledge_record":
                return dict(self._client.request("GET", f"{base}/records/{params['id']}"))
            if tool == "knowledge_history":
                return dict(self._client.request("GET", f"{base}/records/{params['id']}/history"))
            if tool == "knowledge_mutation":
                return dict(self._client.request("GET", f"{base}/mutations/{params['requestId']}"))
            if tool == "knowledge_search":
                url = f"/v1/projects/{self._project}/knowledge/search"
                return dict(self._client.request("POST", url, json=params))
            method, path = routes[tool]
            return dict(self._client.request(method, base + path, json=params))
        except NaturaliAPIError as exc:
            raise BackendError(_explain(exc.message, exc.param)) from exc
        except NaturaliConnectionError as exc:
            raise BackendError(f"{exc}; check that the naturali server is running") from exc


def _explain(message: str, param: object) -> str:
    return f"{message} (fix: {param})" if param else message

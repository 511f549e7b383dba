"""The HTTP call every resource makes; an error answer becomes ``NaturaliAPIError`` with the
error shape, a failed connection ``NaturaliConnectionError``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from naturali_client._errors import (
    NaturaliAPIError,
    NaturaliConnectionError,
    NaturaliTimeoutError,
)


class Resource:
    def __init__(self, http: httpx.Client) -> None:
        self._http = http

    def _pages(self, url: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Each page of a cursor-paged list (``data``, ``next_cursor``), 100 items a call."""
        cursor: str | None = None
        while True:
            query = {**params, "limit": 100, **({"cursor": cursor} if cursor else {})}
            page: dict[str, Any] = self._call("GET", url, params=query)
            yield page
            cursor = page["next_cursor"]
            if not cursor:
                return

    def _every_page(self, url: str, params: dict[str, Any]) -> list[Any]:
        """Every item of a cursor-paged list."""
        return [item for page in self._pages(url, params) for item in page["data"]]

    def _call(self, method: str, url: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, url, **kwargs)
        except httpx.TimeoutException as exc:
            raise NaturaliTimeoutError(_where(exc, url), "no answer in time") from exc
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            raise NaturaliConnectionError(_where(exc, url), f"cannot connect ({reason})") from exc
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
            except (ValueError, KeyError, TypeError):
                error = {"type": "api_error", "message": response.text[:500]}
            raise NaturaliAPIError(response.status_code, error)
        return response.json() if response.content else None


def _where(exc: httpx.TransportError, url: str) -> str:
    try:
        return str(exc.request.url)
    except RuntimeError:  # no request attached
        return url

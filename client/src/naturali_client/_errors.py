"""The SDK's errors (without httpx, so a command can catch them without loading it)."""

from __future__ import annotations

from typing import Any


class NaturaliClientError(Exception):
    """Any failed call: the server answered with an error, or could not be reached."""


class NaturaliAPIError(NaturaliClientError):
    """The server answered with an error: ``status``, and the error shape's ``type``,
    ``code``, ``message``, ``param``."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        self.status = status
        self.type = str(error.get("type", "api_error"))
        self.code = str(error.get("code", self.type))
        self.message = str(error.get("message", "request failed"))
        self.param = error.get("param")
        super().__init__(f"{self.status} {self.code}: {self.message}")


class NaturaliConnectionError(NaturaliClientError):
    """The server could not be reached, or the connection failed mid-call: ``url`` and
    ``message`` say which and why (no status: nothing was answered)."""

    def __init__(self, url: str, message: str) -> None:
        self.url = url
        self.message = message
        super().__init__(f"{message}: {url}")


class NaturaliTimeoutError(NaturaliConnectionError):
    """The server did not answer within the client's ``timeout``."""

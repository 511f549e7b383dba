"""naturali: a self-hosted knowledge layer for AI agents."""

from __future__ import annotations

__version__ = "0.1.0"

from naturali.client import (  # noqa: E402
    Client,
    NaturaliAPIError,
    NaturaliClientError,
    NaturaliConnectionError,
    NaturaliTimeoutError,
)

__all__ = [
    "Client",
    "NaturaliAPIError",
    "NaturaliClientError",
    "NaturaliConnectionError",
    "NaturaliTimeoutError",
    "__version__",
]

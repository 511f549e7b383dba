"""naturali: a self-hosted knowledge layer for AI agents.

The SDK's names (``naturali.Client`` and its errors) load on first use, so commands that
do not talk to a server (``naturali --help``) do not pay for httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Client",
    "NaturaliAPIError",
    "NaturaliClientError",
    "NaturaliConnectionError",
    "NaturaliTimeoutError",
    "__version__",
]

if TYPE_CHECKING:
    from naturali_client import (
        Client,
        NaturaliAPIError,
        NaturaliClientError,
        NaturaliConnectionError,
        NaturaliTimeoutError,
    )


def __getattr__(name: str) -> Any:
    """A documented lazy import: the SDK, loaded when one of its names is first used."""
    if name in __all__:
        import naturali_client

        return getattr(naturali_client, name)
    raise AttributeError(f"module 'naturali' has no attribute {name!r}")

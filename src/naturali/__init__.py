"""naturali: a self-hosted knowledge layer for AI agents."""

from __future__ import annotations

__version__ = "0.1.0"

from naturali.client import Client, NaturaliAPIError  # noqa: E402

__all__ = ["Client", "NaturaliAPIError", "__version__"]

"""Print the HTTP API's OpenAPI document, as ``GET /openapi.json`` serves it (the TypeScript
SDK is generated from it: ``bash scripts/sdk``).

    python -m naturali.api.generate.openapi
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from naturali.api.app import create_app
from naturali.compose import build_services
from naturali.settings import Settings


def document() -> dict[str, Any]:
    """The OpenAPI document of the app (built on a throwaway data dir; nothing is served)."""
    with tempfile.TemporaryDirectory() as work:
        services = build_services(Settings(data_dir=Path(work)))
        try:
            return create_app(services).openapi()
        finally:
            services.close()


def main() -> None:
    print(json.dumps(document(), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""Write knowledge-record-v1 files the way a person or another tool would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML


def write(
    vault: Path, record_id: str, body: str = "", *, name: str | None = None, **front: Any
) -> Path:
    data: dict[str, Any] = {
        "format": "knowledge-record-v1",
        "id": record_id,
        "revision": 1,
        "kind": "claim",
        "type": "fact",
        "lifecycle": "active",
    }
    data.update(front)
    path = vault / (name or f"{record_id}.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    with path.open("w", encoding="utf-8") as fh:
        fh.write("---\n")
        yaml.dump(data, fh)
        fh.write("---\n")
        fh.write(body)
    return path
